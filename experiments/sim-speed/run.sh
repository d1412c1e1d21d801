#!/usr/bin/env bash
# How fast wulf simulates (issue 3, item 8), measured side by side in one run:
#  1. the digits net (784-64-64-10), b = 1 024, EPOCHS epochs: the sequential run
#     (--engine seq) against 16 simulated ranks with the arithmetic on (--engine sim on
#     tests/platforms/flat64.xml). Target: the simulation takes at most 1.5x the wall time.
#  2. 64 simulated ranks of the same net, b = 1 024, one epoch, --numerics off. Target: under
#     10 s of wall time.
# Wall times are whole commands (start, data, training, record), best of REPEAT.
#   experiments/sim-speed/run.sh [build dir] [epochs] [repeat]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
epochs="${2:-4}"
repeat="${3:-3}"
platform="$test_platforms/flat64.xml"
wall() {  # best wall seconds of "$@" over $repeat runs
  local best=""
  for _ in $(seq "$repeat"); do
    local t0 t1
    t0=$(now)
    "$@" > /dev/null
    t1=$(now)
    best=$(echo "$t0 $t1 $best" | awk '{d = $2 - $1; if ($3 == "" || d < $3) print d; else print $3}')
  done
  echo "$best"
}
common=(train --problem digits --block 1024 --quiet)
seq_s=$(wall "$wulf" "${common[@]}" --epochs "$epochs")
sim_s=$(wall "$wulf" "${common[@]}" --epochs "$epochs" --engine sim --np 16 --platform "$platform")
off_s=$(wall "$wulf" "${common[@]}" --epochs 1 --engine sim --np 64 --platform "$platform" --numerics off)
awk -v e="$epochs" -v seq="$seq_s" -v sim="$sim_s" -v off="$off_s" 'BEGIN {
  ratio = sim / seq
  printf "digits 784-64-64-10, b = 1024, %d epochs, wall seconds (best of runs):\n", e
  printf "  sequential (--engine seq)                   %8.2f s\n", seq
  printf "  16 ranks simulated, numerics on             %8.2f s   %.2fx the sequential run (target <= 1.5x: %s)\n", sim, ratio, ratio <= 1.5 ? "met" : "NOT met"
  printf "64 ranks simulated, numerics off, one epoch   %8.2f s   (target < 10 s: %s)\n", off, off < 10 ? "met" : "NOT met"
}' | tee "$here/results.txt"
