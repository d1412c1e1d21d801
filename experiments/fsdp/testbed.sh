#!/usr/bin/env bash
# A sharded run on the testbed against its simulation (issue 64 item 8): Llama 2's layers cut
# down to 4 blocks of 128 (testbed_layers.py), --strategy fsdp on 4 hosts of Bat Cave, with
# and without backward prefetch, 3 iterations each, time only; then the small net of
# tests/test_fsdp.cpp on toy4, simulated with SimGrid's default message factors and with them
# set to 1. Needs root (the testbed); about 6 minutes on 2 cores.
#
#   experiments/fsdp/testbed.sh [BUILD] [OUT]     OUT: folder of the records (/tmp/fsdp-testbed)
# shellcheck source=experiments/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
out="${2:-/tmp/fsdp-testbed}"
mkdir -p "$out"
wulf="$build/wulf"
cd "$root"
python3 experiments/fsdp/testbed_layers.py > "$out/llama-4x128.layers"
# The small net of tests/test_fsdp.cpp's bf16 test: two blocks of 100 100 parameters.
printf '%s\n' 'wulf-layers 1' 'layer emb embedding 0 100x10' 'unit b0' 'layer a linear 1000 1000x100 100' \
  'layer b other 10' 'unit b1' 'layer c linear 1000 1000x100 100' 'layer d other 10' 'unit head' \
  'layer out linear 100 10x10' > "$out/two-blocks.layers"
sed 's#<zone id="toy4" routing="Full">#<config>\n    <prop id="smpi/bw-factor" value="0:1"/>\n    <prop id="smpi/lat-factor" value="0:1"/>\n  </config>\n  <zone id="toy4" routing="Full">#' \
  tests/platforms/toy4.xml > "$out/toy4-factors-1.xml"
run() {  # NAME, then wulf train's options
  local name="$1"
  shift
  "$wulf" train --numerics off --epochs 3 --block 8 --train-size 8 --test-size 0 --np 4 --strategy fsdp \
    -q --out "$out/$name.json" "$@" > "$out/$name.txt" 2>&1 || { cat "$out/$name.txt"; exit 1; }
}
for prefetch in on off; do
  for engine in sim testbed; do
    run "llama-$engine-prefetch-$prefetch" --problem "layers:$out/llama-4x128.layers" --engine "$engine" \
      --platform platforms/batcave.xml --backward-prefetch "$prefetch"
  done
done
run toy4-sim --problem "layers:$out/two-blocks.layers" --engine sim --platform tests/platforms/toy4.xml
run toy4-sim-factors-1 --problem "layers:$out/two-blocks.layers" --engine sim --platform "$out/toy4-factors-1.xml"
run toy4-testbed --problem "layers:$out/two-blocks.layers" --engine testbed --platform tests/platforms/toy4.xml
python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
def per_iteration(name):
    r = json.loads((out / f"{name}.json").read_text())
    h = r["history"]
    return (h[-1]["time_s"] - h[0]["time_s"]) / (len(h) - 1)
print("%-34s %12s %12s %8s" % ("run", "simulation", "testbed", "testbed"))
for prefetch in ("on", "off"):
    s, t = per_iteration(f"llama-sim-prefetch-{prefetch}"), per_iteration(f"llama-testbed-prefetch-{prefetch}")
    print("%-34s %10.4f s %10.4f s %+7.1f%%" % (f"Llama 4x128, Bat Cave, prefetch {prefetch}", s, t, 100 * (t / s - 1)))
t = per_iteration("toy4-testbed")
for name, label in (("toy4-sim", "two blocks, toy4 (SMPI's factors)"), ("toy4-sim-factors-1", "two blocks, toy4 (factors 1)")):
    s = per_iteration(name)
    print("%-34s %10.4f s %10.4f s %+7.1f%%" % (label, s, t, 100 * (t / s - 1)))
PY
