#!/usr/bin/env bash
# wulf recommend on the seed papers' clusters (and one toy platform where parallel wins):
#   experiments/recommend/run.sh [build dir]      (from anywhere; about 6 minutes in all)
# Each search writes NAME.txt (the command, then what it printed, wall times included) and
# NAME.json (its record: every candidate, the screening estimate and confirmed numbers, the
# choice) into experiments/recommend/.
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
wulf="$(cd "$build" && pwd)/wulf"  # absolute: the script moves to $root
cd "$root"  # the records name the platforms as given: platforms/..., tests/platforms/...
search() {  # name [options...]
  local name=$1
  shift
  echo "\$ wulf recommend $*" > "$here/$name.txt"
  "$wulf" recommend "$@" --out "experiments/recommend/$name.json" | tee -a "$here/$name.txt"
}
# The brief's default: encoder 256-8-256 on Bat Cave, every setting wulf's default.
search encoder-batcave --platform platforms/batcave.xml --problem encoder --target-error 0.5
# The same with seed 000's own constants: Table II's Bat Cave phase times, no bias weights
# (w = 4 096 as in Table IV), recursive doubling; b up to 64 as in Fig. 7.
search encoder-batcave-seed000 --platform platforms/batcave.xml --problem encoder --target-error 0.5 \
  --bias off --compute calibrated --profile batcave-encoder --allreduce rdb --blocks 4,8,16,64
# Digits 784-64-64-10 on Messner (seed 000 Figs. 8-9), 95% and 97% test accuracy.
search digits-messner --platform platforms/messner.xml --problem digits --target-error 0.05 --bias off
search digits-messner-3pct --platform platforms/messner.xml --problem digits --target-error 0.03 --bias off \
  --blocks 16,64,256 --max-epochs 60
# What if Messner's links were 10 times faster?
search digits-messner-bw10 --platform platforms/messner.xml --problem digits --target-error 0.05 --bias off \
  --blocks 16,64,256 --bw-scale 10
# A toy where parallel wins: encoder:16 on 4 hosts with Bat Cave's per-pattern phase times
# (tests/platforms/example.profile), three strategies, two learning rates.
search toy-encoder16 --platform tests/platforms/toy4.xml --problem encoder:16 --target-error 0.001 \
  --blocks 4,8 --strategies block,average,ppt --intervals 0,8 --etas 2,4 --compute calibrated \
  --profile tests/platforms/example.profile --max-epochs 3000
# Issue 33: overlap's bucket size and allreduce searched beside block, on Bat Cave and
# Messner, with the net of experiments/overlap (digits 784-256x6-10, here tanh with a softmax
# and cross-entropy so that the deep net learns; 6 000 training patterns): blocks of 64
# patterns per rank at p = 2 and 8 (and of 16 at p = 8), the ring, a bucket per tensor, 512 KiB
# and the whole net.
for cluster in batcave messner; do
  search "overlap-$cluster" --platform "platforms/$cluster.xml" --problem digits --hidden 256,256,256,256,256,256 \
    --activation tanh --output-activation softmax --loss ce --train-size 6000 --test-size 1000 --error class \
    --target-error 0.15 --etas 0.5 --np 2,8 --blocks 128,512 --strategies block,overlap --allreduces ring \
    --bucket-sizes 0,524288,67108864 --max-epochs 20 --finalists 3 --show 20
done
