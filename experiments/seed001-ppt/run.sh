#!/usr/bin/env bash
# Seed 001, Tables 1 and 2, simulated: pattern parallel training (PPT) of 8-bit parity,
# 8-100-1 sigmoid net (w = 1 001 with biases), learning rate 0.1, momentum 0.3 (the
# problem's defaults: seed 001 section 5), initial weights in [-2, 2] (the problem's
# default, experiments/foundation/parity.md), float, on platforms/ppt-p4.xml with compute
# charged by flops (2.4 Gflop/s per P4, the platform's assumption).
#
#   p = 1: the sequential batch run of Table 1 (one rank, local epoch = all 256 patterns)
#   p = 2, 4, 8: local epochs 32, 64, 128, 256
#   seeds 1..10 each.
# Stopping rule (seed 001 section 4.1): each rank's mean squared error over its last
# k n / p = 4 x 256 / p patterns, piggybacked on the allgather and averaged; when the
# average is <= 0.01, every rank checks the check set (for parity: all 256 patterns, there
# is no other) and training stops if its MSE is <= 0.01 too. A run that has not stopped
# after 300 000 rounds is a failure (reported apart).
#
#   experiments/seed001-ppt/run.sh [build dir] [records dir]
# Writes one record per run into the records dir (default /tmp/wulf-seed001-records; they
# are large, a history entry per iteration), the CSV runs.csv beside this script or in $OUT (with
# each run's wall time), then runs timing.sh (the clean time of one round of every (p, e),
# timing.csv, and its check, timing-check.csv), prints the tables (table.py) into
# results.txt and draws ppt.png. The 130 runs took 2 364 s of wall time on 2 cores of an
# Intel Xeon (1 593 s of it in the 13 that did not learn: 300 000 rounds each; 3 486 s on the
# development machine), timing.sh 10 s.
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
records="${2:-/tmp/wulf-seed001-records}"
mkdir -p "$records"
limit_rounds=300000
walls="$records/wall.txt"
: > "$walls"
run() {  # p local_epoch seed
  local p=$1 e=$2 seed=$3
  local rpi=$(( (256 + p * e - 1) / (p * e) ))  # rounds per iteration (wulf's iteration = ~256 patterns)
  local name="p${p}-e${e}-s${seed}"
  local t0
  t0=$(now)
  "$wulf" train --problem parity --strategy ppt --local-epoch "$e" --error-window 4 \
      --error mse --target-error 0.01 --epochs $(( limit_rounds / rpi )) --seed "$seed" \
      --engine sim --np "$p" --platform "$platforms/ppt-p4.xml" --compute flops \
      --quiet --out "$records/$name.json" > /dev/null
  echo "$name $(seconds_since "$t0")" >> "$walls"
}
start=$(date +%s)
for seed in 1 2 3 4 5 6 7 8 9 10; do run 1 256 "$seed"; done
for p in 2 4 8; do
  for e in 32 64 128 256; do
    for seed in 1 2 3 4 5 6 7 8 9 10; do run "$p" "$e" "$seed"; done
  done
done
echo "all runs: $(( $(date +%s) - start )) s wall" | tee "$records/total-wall.txt"
"$python" "$here/collect.py" "$records" "$out/runs.csv"
"$here/timing.sh" "$build"
"$python" "$here/table.py" "$out/runs.csv" "$out/timing.csv" "$out/timing-check.csv" "$out/ppt.png" |
    tee "$out/results.txt"
