#!/usr/bin/env bash
# Issue 33, item 4: overlapped bucketed allreduce (--strategy overlap) against the blocking
# one (--strategy block), simulated and on the testbed (real Open MPI over the emulated
# network), on Bat Cave (100 Mbit/s) and Messner (1 Gbit/s).
#   net     digits (MNIST 28x28) 784-256-256-256-256-256-256-10, float, biases: 532 490
#           weights, 2.03 MiB of gradients in 14 tensors (W7 b7 W6 b6 ... W1 b1 in the backward
#           pass's order; W1 0.77 MiB, W2-W6 0.25 MiB each);
#   work    blocks of 64 patterns per rank, charged as the flops the kernels perform at the
#           platform's host speed, --numerics off (time only: the testbed pads the compute
#           and moves the real bytes);
#   grid    p = 2, 4, 8; block with the ring allreduce, and overlap with its ring at bucket
#           sizes 0 (one tensor per bucket: 14), 512 KiB (about a quarter of the net: 5
#           buckets) and 64 MiB (the whole net in one bucket);
#   runs    4 epochs of one block each (the first, which opens the testbed's TCP connections,
#           is left out of the per-iteration time; one test pattern after each), on sim and on
#           testbed.
# Item 5: `wulf model --overlap` predicts every simulated cell from the platform's constants
# (step model), and the step limits puts it against the simulation where its assumptions hold
# and where they do not: recursive doubling at p = 6 (ranks fold in and out) beside the ring
# there, and Bunyip's tetrahedron of switches with SMPI's size factors at p = 16.
# compare.py prints results.txt, writes results.json and draws overlap.png.
#
#   experiments/overlap/run.sh [build dir] [sim] [model] [limits] [testbed] [compare]
#
# The testbed needs root (network namespaces) and an otherwise idle machine: its times are
# the wall clock's. About 8 minutes on 2 cores (the simulation: 2 s).
# shellcheck source=SCRIPTDIR/../common.sh disable=SC2317  # steps called as step_$name
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "${1:-}"
shift || true
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(sim model limits testbed compare)
rec="$out/records"
mkdir -p "$rec"
cd "$root"  # record platform paths relative to the repository
per_rank=64
blocks=4
dilation=10
hidden=256,256,256,256,256,256
net=(--problem digits --hidden "$hidden" --precision float --numerics off --compute flops --learning block
     --test-size 1 --epochs "$blocks" --quiet)

cell() {  # engine platform p variant, then options
  local engine=$1 platform=$2 p=$3 variant=$4
  shift 4
  local b=$((per_rank * p))
  local extra=() record="$rec/$platform-$engine-p$p-$variant.json"
  [[ $engine == testbed ]] && extra=(--dilation "$dilation")
  [[ ${KEEP_DONE:-0} == 1 && -s $record ]] && return  # KEEP_DONE=1: only the cells not yet measured
  # A testbed launch fails now and then before any rank starts (Open MPI's "ORTE was unable
  # to reliably start one or more daemons" over the namespaces): tried once more, and said.
  for attempt in 1 2; do
    "$wulf" train "${net[@]}" --block "$b" --train-size "$b" --np "$p" --platform "platforms/$platform.xml" \
      --engine "$engine" "${extra[@]}" "$@" --out "$record" > /dev/null && return
    echo "$platform $engine p = $p $variant: attempt $attempt failed" >&2
  done
  return 1
}

grid() {  # engine
  for platform in batcave messner; do
    for p in 2 4 8; do
      cell "$1" "$platform" "$p" block --strategy block --allreduce ring
      for bucket in 0 524288 67108864; do
        cell "$1" "$platform" "$p" "overlap-$bucket" --strategy overlap --bucket-allreduce ring --bucket-bytes "$bucket"
      done
    done
  done
}

step_sim() { grid sim; }

model() {  # platform p record, then options
  local platform=$1 p=$2 record=$3
  shift 3
  local b=$((per_rank * p))
  "$wulf" model --overlap --platform "platforms/$platform.xml" --problem digits --hidden "$hidden" --precision float \
    --test-size 1 --np "$p" --block "$b" --train-size "$b" "$@" --out "$record" > /dev/null
}

step_model() {
  for platform in batcave messner; do
    for p in 2 4 8; do
      model "$platform" "$p" "$rec/$platform-model-p$p.json" --bucket-bytes 0,524288,67108864 --bucket-allreduce ring
    done
  done
}

limit() {  # name platform p, then the overlap options
  local name=$1 platform=$2 p=$3
  shift 3
  cell sim "$platform" "$p" "limit-$name" --ranks-per-host 1 --strategy overlap "$@"
  model "$platform" "$p" "$rec/limit-$name-model.json" "$@"
}

step_limits() {
  limit messner-p6-rdb messner 6 --bucket-allreduce rdb --bucket-bytes 0
  limit messner-p6-ring messner 6 --bucket-allreduce ring --bucket-bytes 0
  limit bunyip-p16-ring bunyip 16 --bucket-allreduce ring --bucket-bytes 0
  limit bunyip-p16-whole bunyip 16 --bucket-allreduce ring --bucket-bytes 67108864
}
step_testbed() { grid testbed; }
step_compare() { "$python" "$here/compare.py" "$rec" "$out"; }

for step in "${steps[@]}"; do
  start=$(now)
  "step_$step"
  echo "$step: $(seconds_since "$start") s" >&2
done
