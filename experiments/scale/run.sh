#!/usr/bin/env bash
# Issue 17, item 1: what a time-only wulf run costs beside a bare SMPI program that makes the
# same allreduces. On a flat 100 Mbit/s cluster of P hosts (one core each, written here), for
# each P: `wulf train --engine sim --problem digits --numerics off --allreduce rdb --epochs 1
# --block 4096`, then wulf-bare-allreduce making as many allreduces (the record's updates) of
# the same 55 050 floats under smpirun with the same settings. /usr/bin/time gives the wall
# time, the CPU time (user + system, all processes) and the peak resident set (the largest
# process: smpirun's simulation of all the ranks). Targets (issue 17): wulf's CPU at most 1.1x
# the bare program's, its peak memory at most 1.2x.
#   experiments/scale/run.sh [build dir] [P list, default 16,64,256,1024]   (4096 takes about 10 GiB)
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "${1:-}"
nps="${2:-16,64,256,1024}"
bare="$build/wulf-bare-allreduce"
[[ -x $bare ]] || { echo "no $bare: build the project first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TMPDIR="$work"  # smpirun's copies of the programs go here, and go with it
rec="$here/records"
mkdir -p "$rec"
# runs.txt keeps the other P's figures from earlier runs; this run's P are measured again.
touch "$rec/runs.txt"
for p in ${nps//,/ }; do
  grep -v -E "^(wulf|bare) $p " "$rec/runs.txt" > "$work/runs.txt" || true
  mv "$work/runs.txt" "$rec/runs.txt"
done
for p in ${nps//,/ }; do
  platform="$work/flat-$p.xml"
  cat > "$platform" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- experiments/scale: a flat cluster of $p hosts, 100 Mbit/s full-duplex links, one switch -->
<platform version="4.1">
  <zone id="flat_zone" routing="Full">
    <cluster id="flat" prefix="flat-" suffix="" radical="0-$((p - 1))" speed="1Gf" core="1"
             bw="12.5MBps" lat="10us" sharing_policy="SPLITDUPLEX"
             bb_bw="1.25GBps" bb_lat="0us" bb_sharing_policy="FATPIPE"/>
  </zone>
</platform>
XML
  hostfile="$work/hosts-$p.txt"
  for ((h = 0; h < p; ++h)); do echo "flat-$h"; done > "$hostfile"
  /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$wulf" train --engine sim --problem digits --numerics off \
    --allreduce rdb --np "$p" --platform "$platform" --epochs 1 --block 4096 --quiet \
    --out "$rec/wulf-p$p.json" > /dev/null
  read -r wall user sys rss < "$work/time.txt"
  calls=$("$python" -c "import json,sys; print(json.load(open(sys.argv[1]))['phases']['updates'])" "$rec/wulf-p$p.json")
  echo "wulf $p $wall $user $sys $rss $calls" >> "$rec/runs.txt"
  /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" smpirun -np "$p" -platform "$platform" -hostfile "$hostfile" \
    --cfg=smpi/simulate-computation:no --cfg=smpi/wtime:0 --cfg=smpi/allreduce:rdb --log=root.thres:warning \
    --log=smpi_config.thres:error "$bare" "$calls" 55050 > "$rec/bare-p$p.json"
  read -r wall user sys rss < "$work/time.txt"
  echo "bare $p $wall $user $sys $rss $calls" >> "$rec/runs.txt"
done
"$python" - "$rec" <<'PY' | tee "$here/results.txt"
import json, os, sys
rec = sys.argv[1]
runs = {}
for line in open(os.path.join(rec, "runs.txt")):
    who, p, wall, user, sys_, rss, calls = line.split()
    runs[(who, int(p))] = {"wall_s": float(wall), "cpu_s": float(user) + float(sys_), "peak_rss_gib": int(rss) / 2**20,
                           "allreduces": int(calls)}
print("time-only digits (55 050 floats, rdb allreduce), flat 100 Mbit/s cluster: wulf beside a bare SMPI program")
print("%6s %6s | %9s %9s %6s | %9s %9s %6s | %9s %9s %6s" % ("P", "calls", "wulf wall", "bare wall", "ratio",
      "wulf CPU", "bare CPU", "ratio", "wulf GiB", "bare GiB", "ratio"))
rows = []
for p in sorted({p for _, p in runs}):
    w, b = runs[("wulf", p)], runs[("bare", p)]
    sim_w = json.load(open(os.path.join(rec, "wulf-p%d.json" % p)))["phases"]["comm_s"]
    sim_b = json.loads(open(os.path.join(rec, "bare-p%d.json" % p)).read().strip().splitlines()[-1])["simulated_s"]
    row = {"np": p, "allreduces": w["allreduces"], "wulf": w, "bare": b,
           "cpu_ratio": w["cpu_s"] / b["cpu_s"], "memory_ratio": w["peak_rss_gib"] / b["peak_rss_gib"],
           "wall_ratio": w["wall_s"] / b["wall_s"], "wulf_comm_s": sim_w, "bare_simulated_s": sim_b}
    rows.append(row)
    print("%6d %6d | %8.2fs %8.2fs %5.2fx | %8.2fs %8.2fs %5.2fx | %9.3f %9.3f %5.2fx" % (
        p, w["allreduces"], w["wall_s"], b["wall_s"], row["wall_ratio"], w["cpu_s"], b["cpu_s"], row["cpu_ratio"],
        w["peak_rss_gib"], b["peak_rss_gib"], row["memory_ratio"]))
print("simulated seconds of communication, rank 0: " + ", ".join(
    "P %d: wulf %.3f, bare %.3f" % (r["np"], r["wulf_comm_s"], r["bare_simulated_s"]) for r in rows))
json.dump({"rows": rows}, open(os.path.join(os.path.dirname(rec), "results.json"), "w"), indent=1)
PY
