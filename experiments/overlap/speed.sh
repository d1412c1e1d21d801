#!/usr/bin/env bash
# Issue 33, item 7: what --strategy overlap costs a time-only simulation beside block. On the
# scale experiment's flat cluster (experiments/scale: P hosts of one core, 100 Mbit/s
# full-duplex links, a FATPIPE backbone of 1.25 GB/s), `wulf train --engine sim --problem
# digits --numerics off --epochs 1 --block 4096` with --strategy block --allreduce rdb, and
# with --strategy overlap --bucket-bytes 0 --bucket-allreduce rdb (one bucket per tensor: the
# digits net 784-70-10 with biases has 4, each moved by wulf's own recursive doubling over
# MPI_Isend/MPI_Irecv, one MPI_Test of every bucket under way per layer). The two run by
# turns, --repeat times each (default 3), and each keeps its run of least CPU (user + system,
# smpirun and all its processes, getrusage). Target (issue 33): overlap's CPU at most 1.1x
# block's at P = 1024.
#   experiments/overlap/speed.sh [build dir] [P list, default 1024] [repeat, default 3]
# About 5 minutes at P = 1024 with 3 repeats. Writes speed.txt and speed.json here.
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "${1:-}"
nps="${2:-1024}"
repeat="${3:-3}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TMPDIR="$work"  # smpirun's copies of the programs go here, and go with it
runs="$work/runs.txt"
for p in ${nps//,/ }; do
  platform="$work/flat-$p.xml"
  cat > "$platform" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- experiments/overlap/speed.sh: the scale experiment's flat cluster of $p hosts -->
<platform version="4.1">
  <zone id="flat_zone" routing="Full">
    <cluster id="flat" prefix="flat-" suffix="" radical="0-$((p - 1))" speed="1Gf" core="1"
             bw="12.5MBps" lat="10us" sharing_policy="SPLITDUPLEX"
             bb_bw="1.25GBps" bb_lat="0us" bb_sharing_policy="FATPIPE"/>
  </zone>
</platform>
XML
  for ((k = 0; k < repeat; ++k)); do
    for who in block overlap; do
      if [[ $who == block ]]; then options=(--strategy block --allreduce rdb)
      else options=(--strategy overlap --bucket-bytes 0 --bucket-allreduce rdb); fi
      # Wall, user and system CPU of the run and all its processes, to the microsecond.
      "$python" -c 'import resource, subprocess, sys, time
before = resource.getrusage(resource.RUSAGE_CHILDREN)
start = time.perf_counter()
rc = subprocess.call(sys.argv[3:], stdout=subprocess.DEVNULL)
wall = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_CHILDREN)
if rc != 0:
    sys.exit("%s P = %s failed (exit %d)" % (sys.argv[2], sys.argv[1], rc))
print(sys.argv[2], sys.argv[1], "%.4f %.4f" % (wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))' \
        "$p" "$who" "$wulf" train --engine sim --problem digits --numerics off --np "$p" --platform "$platform" \
        --epochs 1 --block 4096 --quiet "${options[@]}" --out "$work/$who-p$p.json" >> "$runs"
    done
  done
  "$python" - "$work/block-p$p.json" "$work/overlap-p$p.json" "$p" >> "$work/simulated.txt" <<'PY'
import json, sys
b, o = (json.load(open(f)) for f in sys.argv[1:3])
notes = o["history"][-1]
print(sys.argv[3], b["final"]["time_s"], o["final"]["time_s"], notes["buckets"], notes["progress_tests"])
PY
done
"$python" - "$runs" "$work/simulated.txt" "$here/speed.json" <<'PY' | tee "$here/speed.txt"
import json, sys
best = {}
for line in open(sys.argv[1]):
    who, p, wall, cpu = line.split()
    key = (who, int(p))
    if key not in best or float(cpu) < best[key][1]:
        best[key] = (float(wall), float(cpu))
simulated = {int(l.split()[0]): l.split()[1:] for l in open(sys.argv[2])}
print("time-only digits (784-70-10, 1 epoch of blocks of 4096, numerics off), flat 100 Mbit/s cluster: "
      "overlap (one bucket per tensor, rdb) beside block (rdb); least CPU of the repeats")
print("%6s | %10s %10s %7s | %10s %10s | %7s %7s" % ("P", "block CPU", "overlap CPU", "ratio", "block wall",
      "overlap wall", "buckets", "tests"))
rows = []
for p in sorted({p for _, p in best}):
    b, o = best[("block", p)], best[("overlap", p)]
    sim = simulated.get(p, [0, 0, 0, 0])
    row = {"np": p, "block_cpu_s": b[1], "overlap_cpu_s": o[1], "cpu_ratio": o[1] / b[1], "block_wall_s": b[0],
           "overlap_wall_s": o[0], "block_simulated_s": float(sim[0]), "overlap_simulated_s": float(sim[1]),
           "buckets": float(sim[2]), "progress_tests_last_iteration": float(sim[3]), "target_ratio": 1.1}
    rows.append(row)
    print("%6d | %9.3fs %9.3fs %6.3fx | %9.3fs %9.3fs | %7g %7g" % (p, b[1], o[1], row["cpu_ratio"], b[0], o[0],
          row["buckets"], row["progress_tests_last_iteration"]))
json.dump({"rows": rows}, open(sys.argv[3], "w"), indent=1)
PY
