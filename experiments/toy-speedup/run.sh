#!/usr/bin/env bash
# The toy speedup study: the encoder (256-8-256) with training-set parallelism for p = 1, 2,
# 4 and b = 16 .. 256, for real on this machine (mpirun; p = 4 oversubscribes its 2 cores)
# and simulated on tests/platforms/toy4.xml (4 hosts of 1 Gflop/s on a 100 Mbit/s switch,
# --compute flops). Writes results.csv and speedup.png; prints the table.
#   experiments/toy-speedup/run.sh [build dir] [iterations]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${1:-$here/../../build}"
iterations="${2:-1000}"
platform="$here/../../tests/platforms/toy4.xml"
records="$here/records"
mkdir -p "$records"
for engine in real sim; do
  for p in 1 2 4; do
    for b in 16 32 64 128 256; do
      extra=()
      [ "$engine" = sim ] && extra=(--platform "$platform" --compute flops)
      "$build/wulf" train --problem encoder --engine "$engine" --np "$p" --block "$b" --epochs "$iterations" \
        --allreduce rdb --quiet --out "$records/$engine-p$p-b$b.json" "${extra[@]}" > /dev/null
    done
  done
done
# Debian's python3 has python3-matplotlib (another python3 may come first on PATH).
/usr/bin/python3 "$here/table.py" "$records" "$here/results.csv" "$here/speedup.png"
