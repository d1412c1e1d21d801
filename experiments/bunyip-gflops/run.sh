#!/usr/bin/env bash
# Seed 002 section 7: Fig. 8 (GFlop/s against processors) and the sustained rate on 196
# CPUs with its price/performance, simulated on platforms/bunyip-p2p.xml (the platform
# calibrated on the four-stage reduce of section 5.2). Every run is batch conjugate
# gradient (--strategy cg: each iteration a gradient pass and two line-search probes, each
# a forward and backward pass over all patterns, then the four-stage reduce of error and
# gradient to the master and a broadcast of the step), float, no biases, two iterations,
# numerics off: forward and backward passes charged at the platform's 1 090 MFlop/s per CPU.
# The rate is seed 002's: the forward and backward flops all ranks perform over the simulated time
# (the record's "performance"); the price divides the platform's wulf:cost-usd (USD 150 913).
#   experiments/bunyip-gflops/run.sh [build dir]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
platform="$platforms/bunyip-p2p.xml"
mkdir -p "$here/records"
start=$(date +%s)
train() {  # name, then wulf train options
  local name="$1"
  shift
  "$wulf" train --bias off --precision float --engine sim --platform "$platform" --strategy cg \
    --numerics off --epochs 2 --bcast binomial --quiet --out "$here/records/$name.json" "$@" > /dev/null
}
# Fig. 8, three lines: the small net 400-80-200 on 40 960 patterns, the JOCR net
# 400-480-3203 on 163 480 patterns, and JOCR on 32 000 patterns per processor.
for p in 1 2 4 8 16 32 48 64 96 128 160 194 196; do
  train "small-$p" --problem chars:200 --hidden 80 --train-size 40960 --np "$p" --reduce four-stage
  train "jocr-$p" --problem chars:3203 --train-size 163480 --np "$p" --reduce four-stage
  train "jocr-scaled-$p" --problem chars:3203 --train-size $((32000 * p)) --np "$p" --reduce four-stage
done
# Section 7.3: 9 360 000 patterns on 196 CPUs, with the four-stage and the library reduce,
# and the what-if of CPUs at Emmerald's 940 MFlop/s (its largest tested matrices, section
# 3.4) instead of its 1 090 MFlop/s peak.
train sustained-four-stage --problem chars:3203 --train-size 9360000 --np 196 --reduce four-stage
train sustained-library --problem chars:3203 --train-size 9360000 --np 196 --reduce wulf-binomial
train sustained-940 --problem chars:3203 --train-size 9360000 --np 196 --reduce four-stage \
  --speed-scale "$("$python" -c 'print(940 / 1090)')"
echo "$(( $(date +%s) - start ))" > "$here/wall_s.txt"
"$python" "$here/table.py" "$here" | tee "$here/results.txt"
