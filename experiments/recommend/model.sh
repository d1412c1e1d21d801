#!/usr/bin/env bash
# wulf recommend --screen model (issue 65 item 4): every candidate ranked by the platform
# model, the best simulated beside it, on today's GPU clusters:
#   experiments/recommend/model.sh [build dir]     (from anywhere; about 40 s in all)
# Each search writes NAME.txt (the command, then what it printed, wall times included) and
# NAME.json (its record: every candidate with the model's figures, the ranking, the simulated
# ones, the choice) into experiments/recommend/ ($OUT if set).
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
wulf="$(cd "$build" && pwd)/wulf"  # absolute: the script moves to $root
cd "$root"  # the records name the platforms as given: platforms/...
search() {  # name [options...]
  local name=$1
  shift
  echo "\$ wulf recommend $*" > "$out/$name.txt"
  "$wulf" recommend "$@" --out "$out/$name.json" | tee -a "$out/$name.txt"
}
all_allreduces=ring,rdb,rabenseifner,hierarchical,hierarchical-rabenseifner,rings
# ResNet-50 (ImageNet's 1 281 167 images) on DGX H100 servers, an epoch in at most 20 s: 20
# GPU counts from 2 to 4 096 (the file has 64: beyond it extrapolated), 10 batches a GPU, overlap
# with the six allreduces and eight bucket sizes, fsdp with four shardings on one ring or the
# rings. 10 810 candidates; the model's best 10 simulated.
search model-resnet50-h100 --platform platforms/dgx-h100.xml --problem layers:resnet50 --screen model \
  --target-epoch-seconds 20 --np 2,4,8,16,24,32,48,64,96,128,192,256,384,512,768,1024,1536,2048,3072,4096 \
  --batches 8,16,24,32,48,64,96,128,192,256 --allreduces "$all_allreduces" \
  --bucket-sizes 0,1048576,2097152,5242880,10485760,26214400,52428800,104857600 \
  --shardings full,grad-op,hybrid,none --shard-algorithms ring,rings --confirm 10 --show 20
# GPT-2 (a million sequences) on 4-GPU servers with one 10 GbE NIC each: communication bound.
search model-gpt2-eth10g --platform platforms/eth10g-4gpu.xml --problem layers:gpt2 --train-size 1000000 \
  --screen model --target-epoch-seconds 20000 --np 4,8,12,16,24,32,48,64,128,256,512,1024 --batches 4,8,16 \
  --allreduces "$all_allreduces" --bucket-sizes 0,1048576,5242880,26214400,104857600,1073741824 \
  --shardings full,grad-op,hybrid,none --shard-algorithms ring,rings --confirm 10 --show 20
# Llama 2 7B in bf16 (65 536 sequences) on DGX H100 servers: what a GPU holds decides.
search model-llama7b-h100 --platform platforms/dgx-h100.xml --problem layers:llama2_7b --precision bf16 \
  --train-size 65536 --screen model --target-epoch-seconds 3600 --np 8,16,32,64,128,256,512,1024,2048,4096 \
  --batches 1,2,4,8 --allreduces ring,rings --bucket-sizes 26214400 --shardings full,grad-op,hybrid,none \
  --shard-algorithms ring,rings --confirm 5 --show 20
