#!/usr/bin/env bash
# Issue 34, item 4: how fast a time-only simulation of ResNet-50 with DDP-style buckets runs on
# GPUs = 8 x servers DGX-1 V100 (platforms/gpu/generate.py --preset dgx1-v100), ITER
# iterations of 32 samples a GPU, beside the scale experiment's bare SMPI program
# (experiments/scale/bare_allreduce.cpp: the library's allreduce of the same 25 557 032 floats
# and nothing of wulf). Cases, each one run, by turns:
#   hier-rab    wulf train --strategy overlap --bucket-bytes 26214400 (4 buckets)
#               --bucket-allreduce hierarchical-rabenseifner
#   hier-ring   the same with --bucket-allreduce hierarchical (a ring across the servers)
#   tensor-rab  hier-rab with --bucket-bytes 0 (161 buckets, one per tensor)
#   tensor-rab1 tensor-rab with --bucket-concurrency 1 (the buckets one at a time, as NCCL runs
#               DDP's allreduces on its one stream)
#   tensor-flat1 tensor-rab1 with --bucket-allreduce rabenseifner: Rabenseifner's across all
#               the GPUs, the algorithm of the peer below (2 log2(GPUs) steps a bucket)
#   bare-tensor wulf-bare-allreduce (161 ITER) 158740 noop 3 3 under smpi/allreduce:rab_rdb:
#               SMPI's Rabenseifner (the same 2 log2(GPUs) steps) 161 times an iteration, a
#               bucket per tensor's allreduces (158 740 floats each, the tensors' mean; the
#               steps do not depend on the size from GPUs floats up), and nothing of wulf
#   bare-ring   wulf-bare-allreduce BARE 25557032 noop 3 3 under smpi/allreduce:lr: SMPI's ring
#               (2 (GPUs - 1) steps) of the gradient BARE times (default 1), with the error sums'
#               allreduces of a block run around it. SMPI's rdb and rab_rdb cannot be the peer
#               at 1 024 ranks: each rank allocates temporaries of the whole gradient
#               (std::bad_alloc in 24 GiB); wulf train's block refuses them by its memory
#               estimate (195 GiB) for the same reason.
#   before      hier-rab with the wulf of BEFORE (another build folder, perhaps a copy: the
#               net's file is given by its path), when given
# Targets (issue 34): 1 024 GPUs, 10 iterations, under 60 s and 2 GiB (25 MiB buckets); under
# 5 minutes with one bucket per tensor.
#   experiments/today/speed.sh [build dir] [GPUs, default 1024] [ITER, default 10]
#                              [cases, default hier-rab,hier-ring,bare-ring] [BEFORE] [BARE]
# Writes speed.txt and speed.json here (or in $OUT) (about 25 minutes at 1 024 GPUs on 2 cores).
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "${1:-}"
gpus="${2:-1024}"
iterations="${3:-10}"
cases="${4:-hier-rab,hier-ring,bare-ring}"
before="${5:-}"
bare_calls="${6:-1}"
[[ -z $before ]] || cases="$cases,before"
(( gpus % 8 == 0 )) || { echo "GPUs: a multiple of 8 (DGX-1 servers)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TMPDIR="$work"  # smpirun's copies of the programs go here, and go with it
platform="$work/dgx1-$gpus.xml"
"$python" "$root/platforms/gpu/generate.py" --preset dgx1-v100 --nodes $((gpus / 8)) -o "$platform" >&2
hostfile="$work/hosts"
"$python" - "$platform" > "$hostfile" <<'PY'
import re, sys
for h in re.findall(r'<host id="([^"]+)"', open(sys.argv[1]).read()):
    print(h)
PY
train=(--problem "layers:$root/platforms/nets/resnet50.layers" --numerics off --engine sim --platform "$platform" --np "$gpus"
       --train-size $((gpus * 32)) --block $((gpus * 32)) --test-size "$gpus" --epochs "$iterations" --quiet)
runs="$work/runs.txt"
# The bare program runs with the allocator and malloc settings wulf gives smpirun's process
# (core/engine/launch.cpp: run_ranks, sim_allocator): tcmalloc where installed, unless the
# environment sets LD_PRELOAD itself.
bare_env=(env "GLIBC_TUNABLES=${GLIBC_TUNABLES:-glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824}")
for lib in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib; do
  [[ -z ${LD_PRELOAD+set} && -r $lib/libtcmalloc_minimal.so.4 ]] || continue
  bare_env+=("LD_PRELOAD=$lib/libtcmalloc_minimal.so.4")
  break
done
bare=("${bare_env[@]}" smpirun -np "$gpus" -platform "$platform" -hostfile "$hostfile" --cfg=smpi/simulate-computation:no
      --cfg=smpi/wtime:0 --cfg=smpi/test:0 --cfg=smpi/privatization:no --log=root.thres:warning
      --log=smpi_config.thres:error)
for who in ${cases//,/ }; do
  case $who in
    hier-rab) command=("$wulf" train "${train[@]}" --strategy overlap --bucket-bytes 26214400
                       --bucket-allreduce hierarchical-rabenseifner) ;;
    hier-ring) command=("$wulf" train "${train[@]}" --strategy overlap --bucket-bytes 26214400
                        --bucket-allreduce hierarchical) ;;
    tensor-rab) command=("$wulf" train "${train[@]}" --strategy overlap --bucket-bytes 0
                         --bucket-allreduce hierarchical-rabenseifner) ;;
    tensor-rab1) command=("$wulf" train "${train[@]}" --strategy overlap --bucket-bytes 0 --bucket-concurrency 1
                          --bucket-allreduce hierarchical-rabenseifner) ;;
    tensor-flat1) command=("$wulf" train "${train[@]}" --strategy overlap --bucket-bytes 0 --bucket-concurrency 1
                           --bucket-allreduce rabenseifner) ;;
    bare-ring) command=("${bare[@]}" --cfg=smpi/allreduce:lr "$build/wulf-bare-allreduce" "$bare_calls" 25557032 noop 3 3) ;;
    bare-tensor) command=("${bare[@]}" --cfg=smpi/allreduce:rab_rdb "$build/wulf-bare-allreduce"
                          $((161 * iterations)) 158740 noop 3 3) ;;
    before) command=("$before/wulf" train "${train[@]}" --strategy overlap --bucket-bytes 26214400
                     --bucket-allreduce hierarchical-rabenseifner) ;;
    *) echo "unknown case $who" >&2; exit 2 ;;
  esac
  [[ $who == bare-* ]] || command+=(--out "$work/$who.json")
  echo "== $who: ${command[*]}" >&2
  # Wall, user and system CPU of the run and all its processes, and the largest resident set
  # of one of them (smpirun runs every rank in one process).
  "$python" -c 'import resource, subprocess, sys, time
start = time.perf_counter()
rc = subprocess.call(sys.argv[3:], stdout=open(sys.argv[2], "w"))
wall = time.perf_counter() - start
u = resource.getrusage(resource.RUSAGE_CHILDREN)
if rc != 0:
    sys.exit("%s failed (exit %d)" % (sys.argv[1], rc))
print(sys.argv[1], "%.3f %.3f %d" % (wall, u.ru_utime + u.ru_stime, u.ru_maxrss))' \
    "$who" "$work/$who.out" "${command[@]}" >> "$runs"
  tail -1 "$runs" >&2
done
"$python" - "$runs" "$work" "$gpus" "$iterations" "$out/speed.json" <<'PY' | tee "$out/speed.txt"
import json, os, sys
runs, work, gpus, iterations, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
what = {"hier-rab": "overlap, 25 MiB buckets, hierarchical-rabenseifner",
        "hier-ring": "overlap, 25 MiB buckets, hierarchical (ring across)",
        "tensor-rab": "overlap, a bucket per tensor, hierarchical-rabenseifner",
        "tensor-rab1": "overlap, a bucket per tensor, one at a time, hierarchical-rabenseifner",
        "tensor-flat1": "overlap, a bucket per tensor, one at a time, rabenseifner",
        "bare-tensor": "bare SMPI program, SMPI's rab_rdb of the mean tensor, 161 an iteration",
        "bare-ring": "bare SMPI program, SMPI's ring (lr) of the gradient",
        "before": "overlap, 25 MiB buckets, hierarchical-rabenseifner, the wulf before"}
rows = []
print("ResNet-50, %d simulated V100 (%d DGX-1), %d iterations of 32 samples a GPU, time only; one run each" % (
    gpus, gpus // 8, iterations))
print("%-12s %-58s %9s %9s %8s %14s %9s %8s" % ("case", "", "wall s", "CPU s", "peak MB", "simulated s/it",
                                               "buckets", "tests"))
print("(bare-*: simulated seconds of its allreduces in all)")
for line in open(runs):
    who, wall, cpu, rss = line.split()
    row = {"case": who, "what": what[who], "wall_s": float(wall), "cpu_s": float(cpu), "peak_mb": int(rss) / 1024}
    rec = os.path.join(work, who + ".json")
    if os.path.exists(rec):
        r = json.load(open(rec))
        last = r["history"][-1]
        row.update(simulated_per_iteration_s=r["final"]["time_s"] / iterations, buckets=last.get("buckets"),
                   progress_tests=last.get("progress_tests"))
    else:  # the bare program prints its simulated seconds
        bare = json.loads(open(os.path.join(work, who + ".out")).read().strip().splitlines()[-1])
        row.update(bare_output=bare, simulated_s=bare["simulated_s"], calls=bare["calls"])
    rows.append(row)
    print("%-12s %-58s %9.1f %9.1f %8.0f %14s %9s %8s" % (
        who, what[who], row["wall_s"], row["cpu_s"], row["peak_mb"],
        "%.6f" % row["simulated_per_iteration_s"] if "simulated_per_iteration_s" in row
        else "%.6f" % row["simulated_s"] if "simulated_s" in row else "-",
        row.get("buckets", "-"), row.get("progress_tests", "-")))
json.dump({"gpus": gpus, "iterations": iterations, "rows": rows,
           "targets": {"25MiB_wall_s": 60, "25MiB_peak_gib": 2, "per_tensor_wall_s": 300}}, open(out, "w"), indent=1)
PY
