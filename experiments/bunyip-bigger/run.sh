#!/usr/bin/env bash
# Issue 17, item 2: Bunyip made 4 and 20 times bigger from seed 002's own shape, and whether
# the topology-aware reduce scales. platforms/bunyip/generate.py keeps the tetrahedron (four
# groups, three 100 Mbit/s NICs per node, one switch per pair of groups) and scales what grows
# with the machine: the nodes of a group (24 -> 96 -> 480), the hot spares (2 -> 8 -> 40), so
# that the CPUs are 196 -> 784 -> 3 920, and each edge switch's capacity with its ports
# (3.8 -> 15.2 -> 76 Gbit/s). One iteration of seed 002's JOCR net (400-480-3203, float, no
# bias) with 32 000 patterns per rank and --numerics off, learning by epoch (--strategy root:
# a reduce of the 1 729 440-float gradient to rank 0, a binomial broadcast back), on the
# first 196 x S CPUs in the platform's order, with each reduce:
#   four-stage     seed 002's reduce (wulf's, core/comm/staged_reduce.cpp);
#   binomial       Open MPI 4.1's binomial tree, the next child's receive posted first;
#   wulf-binomial  LAM's binomial tree, one child at a time (the platform's calibration).
# All three are wulf's own point-to-point messages (issue 32). /usr/bin/time gives the wall
# time and the peak resident set.
#   experiments/bunyip-bigger/run.sh [build dir] [scales, default 1,4,20]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "${1:-}"
scales="${2:-1,4,20}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rec="$here/records"
mkdir -p "$rec"
for s in ${scales//,/ }; do forget_runs "$rec/runs.txt" "^$s "; done
for s in ${scales//,/ }; do
  np=$((196 * s))
  if [[ $s == 1 ]]; then
    platform="$platforms/bunyip.xml"
  else
    platform="$work/bunyip-${s}x.xml"
    t0=$(now)
    "$python" "$platforms/bunyip/generate.py" -o "$platform" --nodes-per-group $((24 * s)) --spares $((2 * s)) \
      --switch-gbit "$(echo "3.8 * $s" | bc)" > /dev/null
    echo "generated $platform ($(stat -c %s "$platform") bytes) in $(seconds_since "$t0") s"
  fi
  for reduce in four-stage binomial wulf-binomial; do
    out="$rec/${s}x-$reduce.json"
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$wulf" train --problem chars:3203 --train-size $((32000 * np)) \
      --bias off --precision float --engine sim --np "$np" --platform "$platform" --strategy root --learning epoch \
      --numerics off --epochs 1 --reduce "$reduce" --bcast binomial --quiet --out "$out" > /dev/null
    read -r wall user sys rss < "$work/time.txt"
    echo "$s $reduce ran $np $wall $user $sys $rss" >> "$rec/runs.txt"
    echo "scale $s, $reduce: $wall s, $((rss / 1024)) MB"
  done
done
"$python" - "$rec" <<'PY' | tee "$here/results.txt"
import json, os, sys
rec = sys.argv[1]
rows = []
for line in open(os.path.join(rec, "runs.txt")):
    f = line.split()
    row = {"scale": int(f[0]), "reduce": f[1], "ran": f[2] == "ran", "np": int(f[3])}
    if row["ran"]:
        row.update(wall_s=float(f[4]), cpu_s=float(f[5]) + float(f[6]), peak_rss_gib=int(f[7]) / 2**20)
        r = json.load(open(os.path.join(rec, "%dx-%s.json" % (row["scale"], row["reduce"]))))
        q = r["phases"]["ranks"][0]
        row.update(iteration_s=r["final"]["time_s"], compute_s=q["forward_s"] + q["backward_s"],
                   comm_s=q["comm_s"])
    else:
        row.update(needed_gib=int(f[4]) / 2**20, available_gib=int(f[5]) / 2**20)
    rows.append(row)
order = {"four-stage": 0, "binomial": 1, "wulf-binomial": 2}
rows.sort(key=lambda r: (r["scale"], order[r["reduce"]]))
print("JOCR 400-480-3203 float, one iteration, 32 000 patterns per rank, numerics off, Bunyip x S")
print("%5s %6s %14s | %11s %10s %10s | %9s %9s %9s" % ("S", "ranks", "reduce", "iteration", "compute", "comm",
                                                        "wall", "CPU", "peak GiB"))
for r in rows:
    if r["ran"]:
        print("%5d %6d %14s | %10.2fs %9.2fs %9.2fs | %8.2fs %8.2fs %9.2f" % (
            r["scale"], r["np"], r["reduce"], r["iteration_s"], r["compute_s"], r["comm_s"], r["wall_s"],
            r["cpu_s"], r["peak_rss_gib"]))
    else:
        print("%5d %6d %14s | not run: SMPI's buffers need %.0f GiB, %.0f GiB available" % (
            r["scale"], r["np"], r["reduce"], r["needed_gib"], r["available_gib"]))
json.dump({"rows": rows}, open(os.path.join(os.path.dirname(rec), "results.json"), "w"), indent=1)
PY
