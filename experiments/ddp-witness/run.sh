#!/usr/bin/env bash
# Issue 61: real PyTorch DDP (gloo, one compute thread a rank) on the testbed, beside wulf's
# prediction of the same cells by simulation with --strategy overlap --framework ddp.
#   measure    this machine's compute of the witness net (witness_net.py), one thread, by
#              experiments/nets/torch_times.py: a layer's forward and backward seconds per sample
#              and the optimizer's step, with 1, 2 and 4 processes training at once (the ranks
#              of a cell share this machine's cores: device here-c1, here-c2, here-c4); and DDP's
#              costs beside it by ddp_costs.py's microbenchmarks (never the witness's runs);
#   platforms  each network with hosts of those devices and costs (make_platform.py);
#   testbed    ddp_bench.py under `wulf testbed run` (dilation 1), each cell REPEAT times:
#              networks batcave and batcave-bare, p = 2 and 4, bucket_cap_mb 1, 25 and 64 (the
#              net is 32.1 MiB), gradient_as_bucket_view off and on; and on one process alone
#              without DDP and with each DDP variant;
#   sim        the same cells by wulf train --engine sim (overlap --framework ddp, the
#              measured layer file, the cell's platform);
#   compare    compare.py: results.txt, results.json and ddp-witness.png.
#
#   rate       gloo's allreduce of the largest bucket alone (gloo_rate.py) against wulf platform
#              bench's ring of the same floats on the same platform;
#   experiments/ddp-witness/run.sh [build dir] [measure] [steal] [platforms] [rate] [testbed] [sim] [compare]
#
# Environment: REPEAT (3), ITERATIONS (20), WARMUP (5), BATCH (32 samples a rank), CELLS (a
# regular expression the testbed's and sim's cell names must match; default all),
# KEEP_DONE=1 (measure only the cells without a record), SPEED_PROBES=on (simulate each cell at the
# speed its probes tell, not at the speed the layers were measured at: the probes are recorded
# either way). The testbed needs root and an idle machine; about 80 minutes a repeat of the cells
# of p = 1 and 2 on 2 cores, 35 more for p = 4 (the simulation: seconds).
# shellcheck source=SCRIPTDIR/../common.sh disable=SC2317  # steps called as step_$name
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "${1:-}"
shift || true
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(measure steal platforms rate testbed sim compare)
res="$out/results"
mkdir -p "$res/records" "$res/platforms" "$res/logs"
witness=${NET:-witness}  # the net: witness or small (witness_net.py)
repeat=${REPEAT:-3}
iterations=${ITERATIONS:-20}
warmup=${WARMUP:-5}
# Every PyTorch process keeps the memory it frees (glibc's mmap and trim thresholds raised, as
# wulf's own simulations set them, engine/launch.hpp's sim_glibc_tunables): otherwise each
# iteration's activations come back from the kernel as fresh pages, whose first touch costs
# about 10 us a page in this virtual machine, and the no-DDP loop's iterations ran 2.47 to
# 3.13 s (2.53 to 2.58 s with this, after the heap has grown in the warm-up).
export GLIBC_TUNABLES=glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824
batch=${BATCH:-32}
cells=${CELLS:-.}
read -r -a networks <<< "${NETWORKS:-batcave-bare batcave-bare-x2}"
read -r -a ps <<< "${PS:-2 4}"
steal_runs=${STEAL_RUNS:-3}
shape=$([[ $witness == small ]] && echo 3x32x32 || echo 3x64x64)
caps=(1 25 64)
views=(off on)

step_measure() {
  local model=witness_net:build_net
  [[ $witness == small ]] && model=witness_net:build_small_net
  (cd "$here" && "$python" ../nets/torch_layers.py "$model" "$shape" --name "ddp-witness $witness" \
    --source "experiments/ddp-witness/witness_net.py's $witness net, from its layers; its measured times below.") \
    > "$res/witness.layers.tmp"
  for c in 1 "${ps[@]}"; do
    echo "measuring the layers' times with $c processes at once" >&2
    "$python" "$here/speed_probe.py" --out "$res/records/probe-layers-c$c.json"
    (cd "$here" && "$python" ../nets/torch_times.py "$model" "$shape" --device "here-c$c" \
      --batch "$batch" --warmup 5 --repeat "${TIMES_REPEAT:-10}" --concurrent "$c") >> "$res/witness.layers.tmp"
  done
  mv "$res/witness.layers.tmp" "$res/witness.layers"
  echo "measuring DDP's costs" >&2
  "$python" "$here/ddp_costs.py" --out "$res/costs.json" --repeat "${COSTS_REPEAT:-20}"
}

# What the communication takes from the compute on each network at each p: comm_steal.py on the
# testbed, 3 times (the median is the hosts' comm_cpu).
step_steal() {
  for net in "${networks[@]}"; do
    "$python" "$here/make_platform.py" "$net" --device none > "$res/platforms/$net-bare.xml"
    for p in "${ps[@]}"; do
      for r in $(seq 1 "$steal_runs"); do
        [[ ${KEEP_DONE:-0} == 1 && -s $res/records/steal-$net-p$p-r$r.json ]] && continue
        echo "steal $net p $p r $r" >&2
        rm -rf "$res/logs/steal-$net-p$p-r$r"
        "$wulf" testbed run --platform "$res/platforms/$net-bare.xml" --np "$p" --logs "$res/logs/steal-$net-p$p-r$r" \
          --quiet -- "$python" "$here/comm_steal.py" --out "$res/records/steal-$net-p$p-r$r.json" > /dev/null
      done
    done
  done
}

# The hosts' wulf:ddp: costs.json's constants, comm_cpu the median of the network's steal runs at p
# (the loopback figure where there are none: one process sends nothing).
ddp_costs() {  # net p
  "$python" - "$res" "$1" "$2" <<'EOF'
import glob, json, statistics, sys
res, net, p = sys.argv[1:]
c = json.load(open(res + "/costs.json"))["constants"]
steals = [json.load(open(f))["comm_cpu_s_per_B"] for f in glob.glob("%s/records/steal-%s-p%s-r*.json" % (res, net, p))]
if steals:
    c["comm_cpu_s_per_B"] = statistics.median(steals)
names = [("copy", "copy_Bps"), ("copy_out", "copy_out_Bps"), ("scale", "scale_Bps"), ("tensor", "tensor_s"),
         ("bucket", "bucket_s"), ("iteration", "iteration_s"), ("comm_cpu", "comm_cpu_s_per_B")]
print(", ".join("%s=%.6g" % (n, max(0.0, c[k])) for n, k in names))
EOF
}

step_platforms() {
  for net in "${networks[@]}"; do
    for p in 1 "${ps[@]}"; do
      "$python" "$here/make_platform.py" "$net" --device "here-c$p" --ddp "$(ddp_costs "$net" "$p")" \
        --source "Made by experiments/ddp-witness/run.sh platforms from results/costs.json and results/records/steal-*." \
        > "$res/platforms/$net-p$p.xml"
    done
  done
}

# What gloo's allreduce of the witness's largest bucket (the cap-64 cells' second, 32 584 320
# bytes) achieves alone on each network at each p, against wulf platform bench's ring of the same
# floats on the same platform: how much of a cell's difference is the emulated network's.
step_rate() {
  for net in "${networks[@]}"; do
    for p in "${ps[@]}"; do
      echo "rate $net p $p" >&2
      rm -rf "$res/logs/gloo-rate-$net-p$p"
      "$wulf" testbed run --platform "$res/platforms/$net-p$p.xml" --np "$p" --logs "$res/logs/gloo-rate-$net-p$p" \
        --quiet -- "$python" "$here/gloo_rate.py" --out "$res/records/gloo-rate-$net-p$p.json" --mib 31.07498 > /dev/null
      "$wulf" platform bench "$res/platforms/$net-p$p.xml" --np "$p" --collectives allreduce --allreduce ring \
        --type float --elements 8146080 --repeat 3 --no-pingpong --out "$res/records/bench-ring-$net-p$p.json" > /dev/null
    done
  done
}

# A cell of p ranks runs on NET-pP.xml: hosts of device here-cP (p training at once on this
# machine's cores) and the steal measured at p.
testbed_cell() {  # name net p, then ddp_bench.py's options
  local name=$1 net=$2 p=$3
  shift 3
  [[ $name =~ $cells ]] || return 0
  local record="$res/records/$name.json"
  [[ ${KEEP_DONE:-0} == 1 && -s $record ]] && return 0
  rm -rf "$res/logs/$name"
  echo "testbed $name" >&2
  "$python" "$here/speed_probe.py" --out "$res/records/probe-$name.json"
  "$wulf" testbed run --platform "$res/platforms/$net-p$p.xml" --np "$p" --logs "$res/logs/$name" \
    --out "$res/logs/$name/run.json" --quiet -- \
    "$python" "$here/ddp_bench.py" --out "$record" --net "$witness" --batch "$batch" --warmup "$warmup" \
    --iterations "$iterations" "$@" > /dev/null
}

step_testbed() {
  for r in $(seq 1 "$repeat"); do
    testbed_cell "tb-solo-noddp-r$r" "${networks[0]}" 1 --no-ddp
    for cap in "${caps[@]}"; do
      for view in "${views[@]}"; do
        local v=()
        [[ $view == on ]] && v=(--gradient-as-bucket-view)
        testbed_cell "tb-solo-cap$cap-view$view-r$r" "${networks[0]}" 1 --bucket-cap-mb "$cap" "${v[@]}" --paired
        for net in "${networks[@]}"; do
          for p in "${ps[@]}"; do
            testbed_cell "tb-$net-p$p-cap$cap-view$view-r$r" "$net" "$p" --bucket-cap-mb "$cap" "${v[@]}"
          done
        done
      done
    done
  done
}

# With SPEED_PROBES=on, the machine's speed when a cell ran against when its layers' times were
# measured: the layers' probe over the median of the cell's repeats' probes (speed_probe.py), as
# --speed-scale. Off by default: on two machines the probe read 0.23 to 0.28 s (and 0.226 to 0.316)
# before cells minutes apart, a spread larger than the compute's own (one process without DDP: 3.5%
# over its 3 repeats), so the probes added error instead of removing it (README.md).
speed_scale() {  # name p
  [[ ${SPEED_PROBES:-off} != on ]] && { echo 1; return; }
  "$python" - "$res" "$1" "$2" <<'EOF'
import glob, json, statistics, sys
res, name, p = sys.argv[1:]
layers = json.load(open("%s/records/probe-layers-c%s.json" % (res, p)))["seconds"]
cell = [json.load(open(f))["seconds"] for f in glob.glob("%s/records/probe-tb-%s-r*.json" % (res, name))]
print("%.6g" % (layers / statistics.median(cell) if cell else 1))
EOF
}

sim_cell() {  # name net p, then wulf train's options
  local name=$1 net=$2 p=$3
  shift 3
  [[ $name =~ $cells ]] || return 0
  local b=$((batch * p))
  "$wulf" train --problem "layers:$res/witness.layers" --numerics off --compute flops --precision float \
    --engine sim --np "$p" --platform "$res/platforms/$net-p$p.xml" --block "$b" --train-size "$b" --test-size 1 \
    --epochs $((warmup + iterations)) --strategy overlap --speed-scale "$(speed_scale "$name" "$p")" --quiet "$@" \
    --out "$res/records/sim-$name.json" > /dev/null
}

step_sim() {
  sim_cell "solo-noddp" "${networks[0]}" 1 --framework none
  for cap in "${caps[@]}"; do
    for view in "${views[@]}"; do
      sim_cell "solo-cap$cap-view$view" "${networks[0]}" 1 --framework ddp --bucket-bytes $((cap << 20)) \
        --gradient-as-bucket-view "$view"
      for net in "${networks[@]}"; do
        for p in "${ps[@]}"; do
          sim_cell "$net-p$p-cap$cap-view$view" "$net" "$p" --framework ddp --bucket-bytes $((cap << 20)) \
            --gradient-as-bucket-view "$view"
        done
      done
    done
  done
}

step_compare() { "$python" "$here/compare.py" "$res" --warmup "$warmup" --out "$out"; }

for s in "${steps[@]}"; do
  t0=$(now)
  "step_$s"
  echo "$s: $(seconds_since "$t0") s" >&2
done
