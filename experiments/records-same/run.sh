#!/usr/bin/env bash
# Writes one result record for each kind of run wulf makes, into OUTDIR, with the wulf of
# BUILD: the sample that compare.py sets side by side before and after a change that must
# not change behaviour (issue 13's restructuring).
#
#   experiments/records-same/run.sh BUILD OUTDIR
# shellcheck source=experiments/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
[ $# -eq 2 ] || { echo "usage: $0 BUILD OUTDIR" >&2; exit 2; }
build="$(cd "$build" && pwd)"; wulf="$build/wulf"
out="$2"; mkdir -p "$out"; out="$(cd "$out" && pwd)"
src="$root"
toy4="$test_platforms/toy4.xml"
echo "$src" >"$out/source.txt"  # paths in the records start with it
w() { "$wulf" "$@" >"$out/$name.txt" 2>&1 || echo "$name: exit $?" >>"$out/exits.txt"; }

# Sequential and real runs: wall-clock times differ from run to run, the rest must not.
name=seq-encoder w train --problem encoder --epochs 5 --out "$out/seq-encoder.json" -q
name=seq-parity w train --problem parity --epochs 5 --learning pattern --out "$out/seq-parity.json" -q
name=real-block w train --problem encoder --epochs 3 --block 64 --engine real --np 2 --out "$out/real-block.json" -q
# Every strategy in simulation: simulated times are deterministic, so every field must agree.
for s in block average ppt scatter root cg; do
  name=sim-$s w train --problem encoder --epochs 3 --block 64 --engine sim --np 4 --platform "$toy4" \
    --strategy $s --out "$out/sim-$s.json" -q
done
name=sim-session w train --problem encoder --epochs 2 --engine sim --np 2 --platform "$toy4" --strategy session \
  --sweep "eta=0.5,1.5" --out "$out/sim-session.json" -q
name=sim-four-stage w train --problem encoder --epochs 2 --block 64 --engine sim --np 8 \
  --platform "$src/platforms/bunyip.xml" --reduce four-stage --out "$out/sim-four-stage.json" -q
name=sim-off w train --problem digits --block 1024 --epochs 2 --engine sim --np 16 --numerics off \
  --platform "$src/tests/platforms/flat64.xml" --allreduce rdb --out "$out/sim-off.json" -q
name=sim-calibrated w train --problem function --epochs 3 --engine sim --np 2 --platform "$src/platforms/batcave.xml" \
  --compute calibrated --profile batcave-function --bias off --out "$out/sim-calibrated.json" -q
name=sim-grow w train --problem encoder --epochs 2 --block 64 --engine sim --np 16 --platform "$src/platforms/batcave.xml" \
  --grow 16 --bw-scale 10 --out "$out/sim-grow.json" -q
name=sim-digits w train --problem digits:20x20 --train-size 2000 --test-size 500 --epochs 2 --block 256 --engine sim \
  --np 2 --platform "$toy4" --out "$out/sim-digits.json" -q
# The overlap strategy's kinds of buckets: cut by size, DDP's (with its costs, on a platform
# whose hosts have them), Horovod's rounds and its tensor fusion; a net given by its layers.
name=sim-overlap w train --problem encoder --epochs 3 --block 64 --engine sim --np 4 --platform "$toy4" \
  --strategy overlap --bucket-bytes 256 --out "$out/sim-overlap.json" -q
name=sim-overlap-ddp w train --problem layers:resnet50 --numerics off --block 128 --train-size 128 --test-size 1 \
  --epochs 3 --engine sim --np 4 --platform "$src/platforms/eth10g-4gpu.xml" --strategy overlap --framework ddp \
  --gradient-as-bucket-view on --out "$out/sim-overlap-ddp.json" -q
name=sim-overlap-cycle w train --problem encoder --epochs 3 --block 64 --engine sim --np 4 --platform "$toy4" \
  --strategy overlap --bucket-bytes 256 --bucket-cycle 0.005 --bucket-concurrency 1 \
  --out "$out/sim-overlap-cycle.json" -q
name=sim-overlap-tick w train --problem encoder --epochs 3 --block 64 --engine sim --np 4 --platform "$toy4" \
  --strategy overlap --bucket-bytes 256 --bucket-fusion tick --bucket-cycle 0.005 \
  --out "$out/sim-overlap-tick.json" -q
name=sim-overlap-scheduled w train --problem encoder --epochs 3 --block 64 --engine sim --np 4 --platform "$toy4" \
  --strategy overlap --bucket-bytes 256 --bucket-fusion tick --bucket-cycle 0.005 --bucket-request scheduled \
  --bucket-allreduce rabenseifner --out "$out/sim-overlap-scheduled.json" -q
name=sim-rings w train --problem layers:resnet50 --numerics off --block 64 --train-size 64 --test-size 1 --epochs 2 \
  --engine sim --np 16 --platform "$src/platforms/dgx1-v100.xml" --strategy overlap --bucket-allreduce rings \
  --out "$out/sim-rings.json" -q
# The other commands' records.
name=model w model --profile batcave-function --out "$out/model.json"
name=bench w platform bench "$src/platforms/messner.xml" --np 2,4 --allreduce rdb --out "$out/bench.json"
name=info w platform info "$src/platforms/bunyip.xml"
name=info-toy w platform info "$toy4"
name=plot w plot "$out/sim-block.json" "$out/sim-average.json" --error train --out "$out/plot.png"
echo "records in $out"
