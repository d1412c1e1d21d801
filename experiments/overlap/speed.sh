#!/usr/bin/env bash
# Issue 33, item 7: what --strategy overlap costs a time-only simulation beside block, and
# what SimGrid itself costs for the same messages. On the scale experiment's flat cluster
# (experiments/scale: P hosts of one core, 100 Mbit/s full-duplex links, a FATPIPE backbone
# of 1.25 GB/s), `wulf train --engine sim --problem digits --numerics off --epochs 1 --block
# 4096` (15 updates) with --strategy block --allreduce rdb, and with --strategy overlap
# --bucket-bytes 0 --bucket-allreduce rdb (one bucket per tensor: the digits net 784-64-64-10
# with biases has 6, each moved by wulf's own recursive doubling over MPI_Isend/MPI_Irecv,
# one MPI_Test of every bucket under way per layer). Beside them the bare peer
# wulf-bare-buckets (bare_buckets.cpp) moves the same 6 tensors' rdb messages for the same 15
# updates with nothing of wulf: one after another (`sequential`) and all in flight together
# (`concurrent`, as overlap's buckets are). The four run by turns, --repeat times each
# (default 3), and each keeps its run of least CPU (user + system, smpirun and all its
# processes, getrusage). Target (issue 33): overlap's CPU at most 1.1x block's at P = 1024.
#   experiments/overlap/speed.sh [build dir] [P list, default 1024] [repeat, default 3]
# About 12 minutes at P = 1024 with 3 repeats. Writes speed.txt and speed.json here.
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
  hostfile="$work/hosts-$p"
  for ((h = 0; h < p; ++h)); do echo "flat-$h"; done > "$hostfile"
  for ((k = 0; k < repeat; ++k)); do
    for who in block overlap bare-sequential bare-concurrent; do
      case $who in
        block) command=("$wulf" train --strategy block --allreduce rdb) ;;
        overlap) command=("$wulf" train --strategy overlap --bucket-bytes 0 --bucket-allreduce rdb) ;;
        *)  # the overlap run's tensors in backward order (weights, then biases) and its updates
          read -r -a moved < <("$python" - "$work/overlap-p$p.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
layers, sizes = r["config"]["layers"], []
for i in reversed(range(1, len(layers))):
    sizes += [layers[i - 1] * layers[i]] + ([layers[i]] if r["config"]["bias"] else [])
print(r["phases"]["updates"], *sizes)
PY
)
          command=(smpirun -np "$p" -platform "$platform" -hostfile "$hostfile" --cfg=smpi/simulate-computation:no
                   --cfg=smpi/wtime:0 --cfg=smpi/test:0 --cfg=smpi/privatization:no --log=root.thres:warning
                   --log=smpi_config.thres:error "$build/wulf-bare-buckets" "${who#bare-}" "${moved[@]}") ;;
      esac
      [[ $who == bare-* ]] || command+=(--engine sim --problem digits --numerics off --np "$p" --platform "$platform"
                                        --epochs 1 --block 4096 --quiet --out "$work/$who-p$p.json")
      # Wall, user and system CPU of the run and all its processes, to the microsecond.
      "$python" -c 'import resource, subprocess, sys, time
before = resource.getrusage(resource.RUSAGE_CHILDREN)
start = time.perf_counter()
rc = subprocess.call(sys.argv[4:], stdout=open(sys.argv[3], "w"))
wall = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_CHILDREN)
if rc != 0:
    sys.exit("%s P = %s failed (exit %d)" % (sys.argv[2], sys.argv[1], rc))
print(sys.argv[2], sys.argv[1], "%.4f %.4f" % (wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))' \
        "$p" "$who" "$work/$who-p$p.out" "${command[@]}" >> "$runs"
    done
  done
  "$python" - "$work" "$p" >> "$work/simulated.txt" <<'PY'
import json, sys
work, p = sys.argv[1:3]
b, o = (json.load(open("%s/%s-p%s.json" % (work, who, p))) for who in ("block", "overlap"))
s, c = (json.loads(open("%s/bare-%s-p%s.out" % (work, who, p)).read()) for who in ("sequential", "concurrent"))
notes = o["history"][-1]
print(p, b["final"]["time_s"], o["final"]["time_s"], s["simulated_s"], c["simulated_s"], notes["buckets"],
      notes["progress_tests"])
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
simulated = {int(l.split()[0]): [float(x) for x in l.split()[1:]] for l in open(sys.argv[2])}
print("time-only digits (784-64-64-10, 1 epoch of 15 blocks of 4096, numerics off), flat 100 Mbit/s cluster: overlap "
      "(one bucket per tensor, rdb) beside block (rdb), and the bare SMPI peer moving the same 6 tensors' rdb messages "
      "one after another (sequential) and all in flight together (concurrent); least CPU of the repeats")
print("%6s | %9s %9s %9s %9s | %7s %9s %9s | %s" % ("P", "block", "overlap", "bare seq", "bare conc", "ov/bl",
      "ov/conc", "conc/seq", "simulated s: block overlap seq conc"))
rows = []
for p in sorted({p for _, p in best}):
    cpu = {who: best[(who, p)][1] for who in ("block", "overlap", "bare-sequential", "bare-concurrent")}
    wall = {who: best[(who, p)][0] for who in cpu}
    sim = simulated[p]
    row = {"np": p, "cpu_s": cpu, "wall_s": wall, "cpu_ratio": cpu["overlap"] / cpu["block"],
           "overlap_over_bare_concurrent": cpu["overlap"] / cpu["bare-concurrent"],
           "bare_concurrent_over_sequential": cpu["bare-concurrent"] / cpu["bare-sequential"],
           "simulated_s": dict(zip(("block", "overlap", "bare-sequential", "bare-concurrent"), sim[:4])),
           "buckets": sim[4], "progress_tests_per_rank": sim[5], "target_ratio": 1.1}
    rows.append(row)
    print("%6d | %8.2fs %8.2fs %8.2fs %8.2fs | %6.2fx %8.2fx %8.2fx | %.3f %.3f %.3f %.3f" % (
        p, cpu["block"], cpu["overlap"], cpu["bare-sequential"], cpu["bare-concurrent"], row["cpu_ratio"],
        row["overlap_over_bare_concurrent"], row["bare_concurrent_over_sequential"], *sim[:4]))
json.dump({"rows": rows}, open(sys.argv[3], "w"), indent=1)
PY
