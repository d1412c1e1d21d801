#!/usr/bin/env bash
# Issue 34, item 5: the testbed (real Open MPI over an emulated 10 GbE network) against the
# simulation, ResNet-50 time-only, overlap with the ring (25 MiB buckets; block: the library's
# ring, --allreduce ring, on both engines), on HOSTS servers of
# one GPU (P100 at peak; the PCIe hop at the NIC's rate, --pcie-gbyte 1.25: the same
# bottleneck and simulated times, and a dilation 2 cores can hold), 2 updates of 128 samples
# a GPU an iteration, with SMPI's protocol and with every ring step eager (--eager-limit
# 8388608 on both engines). Each case runs the simulation with wulf's messages as SMPI moves
# them (s4u: concurrent flows, going on without the ranks) and one after another to each
# peer (fifo: Open MPI's TCP transport), then the testbed, which chooses its dilation.
#   experiments/today/testbed.sh [build dir] [HOSTS, default "4 8"] [STRATEGIES, default overlap]
# Writes testbed.txt and testbed.json here (or in $OUT); about 12 minutes on 2 cores. Skips,
# saying why, where the testbed cannot run (wulf testbed check).
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "${1:-}"
hosts_list="${2:-4 8}"
strategies="${3:-overlap}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! why=$("$wulf" testbed check 2>&1); then
  echo "testbed: skipped: $why" | tee "$out/testbed.txt"
  exit 0
fi
rows="$work/rows.jsonl"
for n in $hosts_list; do
  platform="$work/eth$n.xml"
  "$python" "$root/platforms/gpu/generate.py" --preset eth10g-4gpu --nodes "$n" --gpus-per-node 1 --pcie-gbyte 1.25 \
    -o "$platform" >&2
  common=(--problem layers:resnet50 --numerics off --platform "$platform" --np "$n" --train-size $((n * 64))
          --block $((n * 32)) --test-size "$n" --epochs 2 --quiet --allreduce ring)
  for strategy in $strategies; do
    for eager in smpi 8388608; do
      extra=(--strategy "$strategy")
      [[ $strategy != overlap ]] || extra+=(--bucket-allreduce ring)
      [[ $eager == smpi ]] || extra+=(--eager-limit "$eager")
      name="$n-$strategy-$eager"
      for m in s4u fifo; do
        "$wulf" train "${common[@]}" "${extra[@]}" --engine sim --sim-messages "$m" --out "$work/$name-$m.json" >&2
      done
      echo "== testbed $name" >&2
      start=$(now)
      "$wulf" train "${common[@]}" "${extra[@]}" --engine testbed --out "$work/$name-testbed.json" >&2
      "$python" - "$work" "$name" "$n" "$strategy" "$eager" "$(seconds_since "$start")" >> "$rows" <<'PY'
import json, sys
work, name, n, strategy, eager, wall = sys.argv[1:]
rec = {m: json.load(open(f"{work}/{name}-{m}.json")) for m in ("s4u", "fifo", "testbed")}
it = {m: r["final"]["time_s"] / r["final"]["iterations"] for m, r in rec.items()}
print(json.dumps({"hosts": int(n), "strategy": strategy, "eager_limit": eager,
                  "sim_s4u_s": it["s4u"], "sim_fifo_s": it["fifo"], "testbed_s": it["testbed"],
                  "dilation": rec["testbed"]["config"].get("dilation"), "testbed_wall_s": float(wall)}))
PY
    done
  done
done
"$python" - "$rows" "$out/testbed.json" <<'PY' | tee "$out/testbed.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
json.dump({"what": "issue 34 item 5: seconds an iteration, testbed against the simulation (ResNet-50, 10 GbE)",
           "rows": rows}, open(sys.argv[2], "w"), indent=1)
print("ResNet-50 time-only, 2 updates of 128 samples a GPU an iteration, 10 GbE; seconds an iteration")
print(f"{'hosts':>5} {'run':<10} {'eager':<8} {'sim s4u':>9} {'sim fifo':>9} {'testbed':>9} {'D':>5}"
      f" {'vs s4u':>8} {'vs fifo':>8}")
for r in rows:
    d = lambda sim: f"{100 * (r['testbed_s'] / sim - 1):+.1f}%"
    print(f"{r['hosts']:>5} {r['strategy']:<10} {r['eager_limit']:<8} {r['sim_s4u_s']:9.4f} {r['sim_fifo_s']:9.4f}"
          f" {r['testbed_s']:9.4f} {str(r['dilation']):>5} {d(r['sim_s4u_s']):>8} {d(r['sim_fifo_s']):>8}")
PY
