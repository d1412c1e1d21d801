#!/usr/bin/env bash
# Calibration of the seed clusters' platforms against their papers, measured in simulation
# with `wulf platform bench`:
#  - seed 000 Table V: MPI_Allreduce by recursive doubling of w doubles, w = 4 096, 16 768,
#    54 912, p = 2, 4, 8, 16 (Bat Cave has 8 hosts: p = 16 on the 16-host what-if), against
#    Tr(p) = Tw w ceil(log2 p) + Ti; target within 10%;
#  - seed 002 section 5.1: LAM's binomial MPI_Reduce (wulf-binomial) of 1 729 440 floats over 194
#    Bunyip ranks against 8.5 s; target within 20%.
# Writes records/, results.csv and fig1.png (simulated Tr against w, like seed 000's Fig. 1),
# into $OUT if set.
#   experiments/platform-calibration/run.sh [build dir]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
records="$out/records"
mkdir -p "$records"
bench=(platform bench --collectives allreduce --allreduce rdb --type double --elements 4096,16768,54912 --sizes 8
       --repeat 1 --no-pingpong)
"$wulf" "${bench[@]}" "$platforms/batcave.xml" --np 2,4,8 --out "$records/batcave.json" > /dev/null
"$wulf" "${bench[@]}" "$platforms/batcave.xml" --np 16 --grow 16 --out "$records/batcave16.json" > /dev/null
"$wulf" "${bench[@]}" "$platforms/messner.xml" --np 2,4,8,16 --out "$records/messner.json" > /dev/null
"$wulf" platform bench "$platforms/bunyip.xml" --collectives reduce --reduce wulf-binomial --type float \
  --elements 1729440 --np 194 --sizes 8 --repeat 1 --out "$records/bunyip.json" > /dev/null
"$python" "$here/table.py" "$records" "$out/results.csv" "$out/fig1.png"
