#!/usr/bin/env bash
# The toy speedup study: the encoder (256-8-256) with training-set parallelism for p = 1, 2,
# 4 and b = 16 .. 256, for real on this machine (mpirun; p = 4 oversubscribes its 2 cores)
# and simulated on tests/platforms/toy4.xml (4 hosts of 1 Gflop/s on a 100 Mbit/s switch,
# --compute flops). Writes records/, results.csv and speedup.png (into $OUT if set); prints the
# table.
#   experiments/toy-speedup/run.sh [build dir] [iterations]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
iterations="${2:-1000}"
engines="${ENGINES:-real sim}"  # ENGINES=sim: the simulated rows only (experiments/toy-speedup/check.py)
platform="$test_platforms/toy4.xml"
records="$out/records"
mkdir -p "$records"
for engine in $engines; do
  for p in 1 2 4; do
    for b in 16 32 64 128 256; do
      extra=()
      [ "$engine" = sim ] && extra=(--platform "$platform" --compute flops)
      "$wulf" train --problem encoder --engine "$engine" --np "$p" --block "$b" --epochs "$iterations" \
        --allreduce rdb --quiet --out "$records/$engine-p$p-b$b.json" "${extra[@]}" > /dev/null
    done
  done
done
"$python" "$here/table.py" "$records" "$out/results.csv" "$out/speedup.png"
