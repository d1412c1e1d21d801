#!/usr/bin/env bash
# Seed 002 section 5.2: the library reduce against the four-stage reduce of 6.6 MB
# (1 729 440 floats) over 194 processes of Bunyip, stage by stage, on both Bunyip platforms;
# then Fig. 6: the speed-up of a training iteration from the optimised reduce against the
# number of training patterns (JOCR net, 194 ranks, numerics off). Writes records/, results.txt
# and fig6.png, into $OUT if set.
#   experiments/bunyip-reduce/run.sh [build dir]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
mkdir -p "$out/records"
for platform in bunyip bunyip-p2p; do
  for reduce in wulf-binomial four-stage; do
    "$wulf" platform bench "$platforms/$platform.xml" --collectives reduce --reduce "$reduce" --type float \
      --elements 1729440 --np 194 --repeat 1 --no-pingpong --out "$out/records/reduce-$platform-$reduce.json" > /dev/null
  done
done
# Fig. 6: one iteration of learning by epoch (gradient, reduce to the master, broadcast
# back), gradients charged at 1 090 Mflop/s per CPU, for several training-set sizes.
for platform in bunyip bunyip-p2p; do
  for reduce in wulf-binomial four-stage; do
    for patterns in 194000 388000 970000 1940000 4850000 9264000; do
      "$wulf" train --problem chars:3203 --train-size "$patterns" --bias off --precision float --engine sim \
        --np 194 --platform "$platforms/$platform.xml" --strategy root --learning epoch --numerics off --epochs 1 \
        --reduce "$reduce" --bcast binomial --quiet --out "$out/records/fig6-$platform-$reduce-$patterns.json" > /dev/null
    done
  done
done
"$python" "$here/table.py" "$out" | tee "$out/results.txt"
