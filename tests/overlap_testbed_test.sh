#!/usr/bin/env bash
# --strategy overlap on the testbed (issue 33, item 4's short cells): Bat Cave, p = 2, the net
# of experiments/overlap (digits 784-256x6-10, 64 patterns a rank, numerics off), block's
# blocking ring against overlap with one bucket per tensor, each on the simulation and on the
# testbed (real Open MPI over the emulated network, dilation 10). Targets, as the issue's:
# the time per iteration within 5% of the simulation's, and the saving over block within
# 5 percentage points of the simulated saving. Horovod's tensor fusion (--bucket-fusion tick,
# a 10 ms cycle, the allreduces one at a time: each tick's negotiation through rank 0 is real
# messages on the testbed) within 5% too (measured 2026-11-29: 0.4165 s against 0.4110
# simulated, +1.3%). Skipped (exit 77) with the reason where this machine cannot build the
# testbed.
#   overlap_testbed_test.sh BUILD_DIR PLATFORM
set -u
source "$(dirname "$0")/run_checks.sh"
setup_test "$1" "$2"

require_testbed

hidden=256,256,256,256,256,256
net=(train --problem digits --hidden "$hidden" --precision float --numerics off --compute flops
     --learning block --test-size 1 --epochs 4 --block 128 --train-size 128 --np 2 --platform "$platform" --quiet)
for engine in sim testbed; do
  extra=()
  [ "$engine" = testbed ] && extra=(--dilation 10)
  "$build/wulf" "${net[@]}" --engine "$engine" "${extra[@]}" --strategy block --allreduce ring \
    --out "$tmp/$engine-block.json" >"$tmp/out" 2>&1 || fail "block on $engine: $(cat "$tmp/out")"
  "$build/wulf" "${net[@]}" --engine "$engine" "${extra[@]}" --strategy overlap --bucket-bytes 0 \
    --out "$tmp/$engine-overlap.json" >"$tmp/out" 2>&1 || fail "overlap on $engine: $(cat "$tmp/out")"
  "$build/wulf" "${net[@]}" --engine "$engine" "${extra[@]}" --strategy overlap --bucket-bytes 0 \
    --bucket-fusion tick --bucket-cycle 0.01 --bucket-concurrency 1 \
    --out "$tmp/$engine-fusion.json" >"$tmp/out" 2>&1 || fail "overlap's fusion on $engine: $(cat "$tmp/out")"
done
python3 - "$tmp" <<'EOF' || fail "the testbed's overlap disagrees with the simulation"
import json, os, sys
def per_iteration(name):  # epochs 2..4: the first opens the testbed's connections
    t = [h["time_s"] for h in json.load(open(os.path.join(sys.argv[1], name + ".json")))["history"]]
    return (t[-1] - t[1]) / (len(t) - 2)
s = {v: per_iteration("sim-" + v) for v in ("block", "overlap", "fusion")}
b = {v: per_iteration("testbed-" + v) for v in ("block", "overlap", "fusion")}
save = lambda t: 100 * (1 - t["overlap"] / t["block"])
for v in s:
    print(f"{v}: sim {s[v]:.4f} s, testbed {b[v]:.4f} s ({100 * (b[v] / s[v] - 1):+.1f}%)")
    assert abs(b[v] / s[v] - 1) <= 0.05, v
print(f"saving over block: sim {save(s):.1f}%, testbed {save(b):.1f}%")
assert save(s) > 10, "the simulated saving is the point of the cell"
assert abs(save(b) - save(s)) <= 5
EOF
echo "ok"
