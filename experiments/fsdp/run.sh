#!/usr/bin/env bash
# Times wulf's simulation of sharded data parallelism (--strategy fsdp) on today's models and
# machines, time only: one iteration, the wall seconds, the resident set and the memory estimate of this machine
# beside the simulated seconds (issue 64 item 7).
#
#   experiments/fsdp/run.sh [BUILD] [OUT]     about 10 s; OUT: folder of the records (/tmp/fsdp)
# shellcheck source=experiments/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
out="${2:-/tmp/fsdp}"
mkdir -p "$out"
wulf="$build/wulf"
run() {  # NAME, then wulf train's options
  local name="$1"
  shift
  /usr/bin/time -f "%e %M" -o "$out/$name.time" "$wulf" train --numerics off --epochs 1 --test-size 0 \
    --strategy fsdp -q --out "$out/$name.json" "$@" >"$out/$name.txt" 2>&1 || { cat "$out/$name.txt"; exit 1; }
  python3 - "$out/$name.json" "$out/$name.time" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall, kb = open(sys.argv[2]).read().split()
h = r["history"][-1]
print("%-28s %4d ranks  %9.3f s simulated  %7.2f s wall  %6.2f GiB resident  %6.2f GiB estimated  %6.1f GiB a device" % (
    sys.argv[3], r["config"]["np"], h["time_s"], float(wall), int(kb) / 2**20,
    r["config"]["memory_estimate"]["machine_bytes"] / 2**30, r["config"]["device_memory"]["per_rank_bytes"] / 2**30))
PY
}
cd "$root"
run llama2-7b-h100x64 --problem layers:llama2_7b --block 64 --train-size 64 --engine sim --np 64 \
  --platform platforms/dgx-h100.xml --precision bf16 --recompute on
run llama2-7b-v100x8 --problem layers:llama2_7b --block 64 --train-size 64 --engine sim --np 8 \
  --platform platforms/dgx1-v100.xml
run gpt2-a100x16 --problem layers:gpt2 --block 64 --train-size 64 --engine sim --np 16 \
  --platform platforms/dgx-a100.xml --precision bf16
