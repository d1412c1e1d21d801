#!/usr/bin/env bash
# The DGX A100 and DGX H100 platforms (platforms/dgx-a100.xml, dgx-h100.xml) against
# nccl-tests' published bus bandwidths: `wulf platform bench` ping-pongs over each kind of
# route, and allreduces of 64 MiB and 256 MiB (floats) on 8 GPUs (one server) and 16 (two),
# by wulf's ring, rings (one ring per NIC, as NCCL's channels) and hierarchical allreduce.
# busbw.py turns the records into nccl-tests' busbw and the README's table.
#   experiments/gpu-platforms/run.sh [build dir]        (about 2 minutes on 2 cores)
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
results="$out/results"
mkdir -p "$results"

for machine in a100 h100; do
  file="$platforms/dgx-$machine.xml"
  name="dgx$machine"
  "$wulf" platform info "$file" > "$results/info-$machine.txt"
  # One way: the NVSwitch route inside a server, and a GPU to another server's GPU.
  for route in "inside:$name-0-gpu0,$name-0-gpu5" "across:$name-0-gpu3,$name-1-gpu6"; do
    tag="${route%%:*}" pair="${route#*:}"
    "$wulf" platform bench "$file" --hosts "$pair" --sizes 8,67108864 --np 2 --collectives allreduce \
      --elements 1 --repeat 1 --out "$results/pingpong-$machine-$tag.json" > "$results/pingpong-$machine-$tag.txt"
  done
  for algorithm in ring rings hierarchical; do
    "$wulf" platform bench "$file" --np 8,16 --collectives allreduce --allreduce "$algorithm" \
      --elements 16777216,67108864 --type float --no-pingpong --repeat 1 --unread-sums \
      --out "$results/allreduce-$machine-$algorithm.json" > "$results/allreduce-$machine-$algorithm.txt"
  done
done
# What-if, not a shipped platform: NCCL's own effective NVLink rate a link (NVIDIA/nccl
# src/graph/topo.h: SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6) instead of the 25 GB/s line rate.
whatif=$(mktemp -d)
trap 'rm -rf "$whatif"' EXIT
for machine in a100 h100; do
  rate=$([ $machine = a100 ] && echo 20 || echo 20.6)
  "$python" "$platforms/gpu/generate.py" --preset "dgx-$machine" --nodes 2 --nvlink-gbyte "$rate" \
    -o "$whatif/$machine.xml" 2> /dev/null
  "$wulf" platform bench "$whatif/$machine.xml" --np 8 --collectives allreduce --allreduce ring \
    --elements 16777216,67108864 --type float --no-pingpong --repeat 1 --unread-sums \
    --out "$results/whatif-nccl-nvlink-$machine.json" > "$results/whatif-nccl-nvlink-$machine.txt"
done
"$python" "$here/busbw.py" "$results" | tee "$results/busbw.txt"
