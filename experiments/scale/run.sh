#!/usr/bin/env bash
# Issue 17, item 1: what a time-only wulf run costs beside a bare SMPI program that makes the
# same collectives. On a flat 100 Mbit/s cluster of P hosts (one core each, written here), for
# each P: `wulf train --engine sim --problem digits --numerics off --allreduce rdb --epochs 1
# --block 4096`, then wulf-bare-allreduce (bare_allreduce.cpp) under smpirun with the same
# settings, making the collectives the wulf run made: as many
# allreduces of the same 55 050 floats as the record's updates, as many of 4 doubles as its
# other collectives (the error sums), the binomial gather of the phases and the gather of
# host names, in the order wulf makes them. Twice: as smpirun
# runs it by default ("bare"), and given what wulf does ("noop": a gradient reduction that
# adds nothing into one block all ranks share, one copy of the program). `timed` gives the wall
# time, the CPU time (user + system, all processes) and the peak resident set (the largest
# process: smpirun's simulation of all the ranks). At P up to 256, where a run takes a second or
# less, each program runs 5 times and the run of least CPU is kept (a bare program's record
# then holds one output line per run). Targets (issue 17): wulf's CPU at most 1.1x the bare
# program's, its peak memory at most 1.2x.
#   experiments/scale/run.sh [build dir] [P list, default 16,64,256,1024] [backbone|no-backbone]
# (4096 takes about 4 minutes). The switch is a FATPIPE backbone of 1.25 GB/s by default,
# which never limits a flow; no-backbone writes the same cluster without it (a route is then
# the two hosts' private links), the same non-blocking switch to SimGrid's flows, and keeps
# its records and results apart (records-no-backbone/, results-no-backbone.*).
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "${1:-}"
nps="${2:-16,64,256,1024}"
switch="${3:-backbone}"
case $switch in
  backbone) backbone='bb_bw="1.25GBps" bb_lat="0us" bb_sharing_policy="FATPIPE"' suffix="" ;;
  no-backbone) backbone="" suffix="-no-backbone" ;;
  *) echo "run.sh: the switch is backbone or no-backbone, not '$switch'" >&2; exit 2 ;;
esac
bare="$build/wulf-bare-allreduce"
[[ -x $bare ]] || { echo "no $bare: build the project first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TMPDIR="$work"  # smpirun's copies of the programs go here, and go with it
rec="$here/records$suffix"
mkdir -p "$rec"
# runs.txt keeps the other P's figures from earlier runs; this run's P are measured again.
for p in ${nps//,/ }; do forget_runs "$rec/runs.txt" "^(wulf|bare|noop) $p "; done
# timed OUT COMMAND...: runs COMMAND and writes to OUT its wall seconds, the user and system
# CPU seconds of it and all its processes, to the microsecond (getrusage of the children,
# where /usr/bin/time rounds to 10 ms: at P = 16 that is one seventh of a run), and the
# largest resident set in KiB.
timed() {
  "$python" -c 'import resource, subprocess, sys, time
before = resource.getrusage(resource.RUSAGE_CHILDREN)
start = time.perf_counter()
rc = subprocess.call(sys.argv[2:])
wall = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as out:
    print("%.4f %.4f %.4f %d" % (wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime,
                                after.ru_maxrss), file=out)
sys.exit(rc)' "$@"
}
# measure P COMMAND...: runs COMMAND (5 times at P <= 256) under timed and sets wall, user, sys
# and rss to the run of least CPU.
measure() {
  local p=$1 best="" line
  shift
  for ((k = 0; k < (p <= 256 ? 5 : 1); ++k)); do
    timed "$work/time.txt" "$@"
    line=$(tail -n 1 "$work/time.txt")
    if [[ -z $best ]] || awk -v a="$line" -v b="$best" 'BEGIN { split(a, x); split(b, y); exit !(x[2] + x[3] < y[2] + y[3]) }'; then
      best=$line
    fi
  done
  read -r wall user sys rss <<< "$best"
}
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
             $backbone/>
  </zone>
</platform>
XML
  hostfile="$work/hosts-$p.txt"
  for ((h = 0; h < p; ++h)); do echo "flat-$h"; done > "$hostfile"
  measure "$p" "$wulf" train --engine sim --problem digits --numerics off \
    --allreduce rdb --np "$p" --platform "$platform" --epochs 1 --block 4096 --quiet \
    --out "$rec/wulf-p$p.json" > /dev/null
  # The record's allreduces: one of the gradients per update, and the error sums' (4 doubles):
  # two of the untrained net's (test and training set) before the first update, the rest after.
  read -r calls small < <("$python" -c "import json,sys; ph = json.load(open(sys.argv[1]))['phases']
print(ph['updates'], ph['comm_calls'] - ph['updates'])" "$rec/wulf-p$p.json")
  echo "wulf $p $wall $user $sys $rss $calls" >> "$rec/runs.txt"
  # The bare program as smpirun runs it by default (MPI_SUM; a private copy per rank), then
  # with what wulf does in a time-only run: the reduction that adds nothing, one copy of the
  # program for all ranks (smpi/privatization:no).
  for who in bare noop; do
    extra=()
    [[ $who == noop ]] && extra=(--cfg=smpi/privatization:no)
    measure "$p" smpirun -np "$p" -platform "$platform" -hostfile "$hostfile" \
      --cfg=smpi/simulate-computation:no --cfg=smpi/wtime:0 --cfg=smpi/allreduce:rdb "${extra[@]}" \
      --log=root.thres:warning --log=smpi_config.thres:error "$bare" "$calls" 55050 \
      "$([[ $who == noop ]] && echo noop || echo sum)" 2 $((small - 2)) > "$rec/$who-p$p.json"
    echo "$who $p $wall $user $sys $rss $calls" >> "$rec/runs.txt"
  done
done
"$python" - "$rec" "$switch" "$here/results$suffix.json" <<'PY' | tee "$here/results$suffix.txt"
import json, os, sys
rec, switch, results_json = sys.argv[1:4]
runs = {}
for line in open(os.path.join(rec, "runs.txt")):
    who, p, wall, user, sys_, rss, calls = line.split()
    runs[(who, int(p))] = {"wall_s": float(wall), "cpu_s": float(user) + float(sys_), "peak_rss_gib": int(rss) / 2**20,
                           "allreduces": int(calls)}
print("time-only digits (55 050 floats, rdb allreduce), flat 100 Mbit/s cluster (switch: %s): wulf beside a bare SMPI program" % (
    "a FATPIPE backbone of 1.25 GB/s" if switch == "backbone" else "no backbone, routes of the two private links"))
print("bare: MPI_SUM, smpirun's defaults; noop: the bare program doing what wulf does (a no-op reduction from and into one shared block, one copy of the program)")
print("%6s | %9s %9s %9s | %8s %8s %8s %6s %6s | %8s %8s %8s %6s" % ("P", "wulf wall", "bare wall", "noop wall",
      "wulf CPU", "bare CPU", "noop CPU", "/bare", "/noop", "wulf GiB", "bare GiB", "noop GiB", "/bare"))
rows = []
for p in sorted({p for _, p in runs}):
    if ("noop", p) not in runs:
        continue  # measured before the no-op bare run existed: run run.sh again for this P
    w, b, n = runs[("wulf", p)], runs[("bare", p)], runs[("noop", p)]
    wulf_record = json.load(open(os.path.join(rec, "wulf-p%d.json" % p)))
    sim_w = wulf_record["phases"]["comm_s"]
    sim_b = json.loads(open(os.path.join(rec, "bare-p%d.json" % p)).read().strip().splitlines()[-1])["simulated_s"]
    row = {"np": p, "allreduces": w["allreduces"], "wulf": w, "bare": b, "bare_noop": n,
           "cpu_ratio": w["cpu_s"] / b["cpu_s"], "cpu_ratio_noop": w["cpu_s"] / n["cpu_s"],
           "memory_ratio": w["peak_rss_gib"] / b["peak_rss_gib"],
           "memory_ratio_noop": w["peak_rss_gib"] / n["peak_rss_gib"],
           "wall_ratio": w["wall_s"] / b["wall_s"], "wulf_comm_s": sim_w, "bare_simulated_s": sim_b,
           "wulf_time_s": wulf_record["final"]["time_s"]}
    rows.append(row)
    print("%6d | %8.3fs %8.3fs %8.3fs | %7.3fs %7.3fs %7.3fs %5.2fx %5.2fx | %8.3f %8.3f %8.3f %5.2fx" % (
        p, w["wall_s"], b["wall_s"], n["wall_s"], w["cpu_s"], b["cpu_s"], n["cpu_s"], row["cpu_ratio"],
        row["cpu_ratio_noop"], w["peak_rss_gib"], b["peak_rss_gib"], n["peak_rss_gib"], row["memory_ratio"]))
for a, b in zip(rows, rows[1:]):
    print("P %d -> %d: CPU grows %.2fx (wulf), %.2fx (bare), %.2fx (noop); memory %.2fx, %.2fx, %.2fx" % (
        a["np"], b["np"], b["wulf"]["cpu_s"] / a["wulf"]["cpu_s"], b["bare"]["cpu_s"] / a["bare"]["cpu_s"],
        b["bare_noop"]["cpu_s"] / a["bare_noop"]["cpu_s"], b["wulf"]["peak_rss_gib"] / a["wulf"]["peak_rss_gib"],
        b["bare"]["peak_rss_gib"] / a["bare"]["peak_rss_gib"],
        b["bare_noop"]["peak_rss_gib"] / a["bare_noop"]["peak_rss_gib"]))
print("simulated seconds of communication, rank 0: " + ", ".join(
    "P %d: wulf %.3f, bare %.3f" % (r["np"], r["wulf_comm_s"], r["bare_simulated_s"]) for r in rows))
print("simulated seconds of the run (wulf's record) and of the bare program: " + ", ".join(
    "P %d: %.15g and %.9f" % (r["np"], r["wulf_time_s"], r["bare_simulated_s"]) for r in rows))
json.dump({"switch": switch, "rows": rows}, open(results_json, "w"), indent=1)
PY
