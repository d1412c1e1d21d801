#!/usr/bin/env bash
# Seed 000's Table VII: predicted speedups of the function example (2-128-128-1, w = 16 768)
# on Bat Cave for b = 16..128 and p = 2, 4, 8, by wulf's model (eq. 7 with Tables II and V)
# and by wulf's simulator (platforms/batcave.xml, --compute calibrated with the same
# profile, --numerics off, double precision: Table V times 8-byte weights), beside the
# paper's values. Writes records/ and results.csv (into $OUT if set).
#   experiments/table-vii/run.sh [build dir]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
platform="$platforms/batcave.xml"
records="$out/records"
mkdir -p "$records"
"$wulf" model --profile batcave-function --np 2,4,8 --block 16,32,64,128 --out "$records/model.json" > /dev/null
for p in 1 2 4 8; do
  for b in 16 32 64 128; do
    "$wulf" train --problem function --bias off --precision double --block "$b" --epochs 1 --engine sim --np "$p" \
      --platform "$platform" --compute calibrated --profile batcave-function --numerics off --allreduce rdb \
      --quiet --out "$records/sim-p$p-b$b.json" > /dev/null
  done
done
"$python" "$here/table.py" "$records" "$out/results.csv"
