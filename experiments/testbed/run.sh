#!/usr/bin/env bash
# Issue 16 item 6: the testbed (real Open MPI over an emulated Bat Cave on this machine,
# network and compute slowed by D = 10) against wulf's simulation of the same platform.
#   1. bench: allreduce of 4 096, 16 768 and 54 912 doubles at p = 2, 4, 8 and the ping-pong,
#      three times on the testbed (the median of each cell is kept); once in simulation as the
#      platform is, and once calibrated from the testbed's ping-pong (--bw-scale, --lat-scale);
#   2. table7: seed 000's Table VII (the function example, p = 2, 4, 8 x b = 16..128, one
#      iteration, numerics off) on both engines, with p = 1 on each for the speedup, and in
#      simulation once more with the testbed's eager limit (--eager-limit 4194304);
#      again7: the p = 8, b = 16 and 32 cells twice more on the testbed;
#   3. train: the function example trained to a test rmse of 0.19 at p = 4 on both engines;
#   4. backtoback: the allreduces of step 1 at p = 4, 8 made back to back, as training makes
#      them (no barrier between calls), three times on the testbed, and in simulation with
#      SMPI's rendezvous and with the testbed's eager limit;
#   5. diagnose: the allreduce bench again at D = 20, and the ping-pong over more sizes;
#   6. states: rank 0's time in each of 64 back-to-back allreduces of 16 768 doubles at p = 8
#      (--gap 0, and 1.36 ms of compute before each call, a Table VII block of 16's), 4 runs
#      of each on the testbed, once each in simulation with rendezvous and with the eager
#      limit: which runs stay in step and which fall into the two-call cycle (issue 32 item 2);
#   7. protocol: one protocol on both engines (issue 32 item 2). The allreduce grid with
#      defaults, and the Table VII iteration at p = 8, b = 16 with rdb (3 testbed runs each),
#      at the testbed's eager limit (4 MiB) and at Open MPI's own (64 KiB), each beside the
#      simulation given the same limit and the simulation as it is (SMPI's rendezvous).
# Both sides run recursive doubling: SMPI's rdb, Open MPI's coll_tuned algorithm 3.
# compare.py prints the tables, writes results.json and draws testbed.png.
#
#   experiments/testbed/run.sh [build dir] [bench] [backtoback] [table7] [again7] [train] [diagnose] [states] [protocol] [compare]
#
# With no step named it runs them all, one run after another. Needs root (the testbed makes
# network namespaces). Run it on an otherwise idle machine: the testbed's times are the
# wall clock's, and any other load on the 2 cores disturbs them.
# shellcheck source=SCRIPTDIR/../common.sh disable=SC2054,SC2317  # lists of sizes; steps called as step_$name
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "${1:-}"
shift || true
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(bench backtoback table7 again7 train diagnose states protocol compare)
rec="$here/records"
mkdir -p "$rec"
cd "$root"  # record platform paths relative to the repository
platform=platforms/batcave.xml
dilation=10
eager=4194304  # the testbed's Open MPI eager limit (kTestbedEagerBytes), for the simulation beside it
repeat=10
sizes=1,65536,1048576
bench=(platform bench "$platform" --collectives allreduce --np 2,4,8 --elements 4096,16768,54912
       --allreduce rdb --repeat "$repeat")
table7=(train --problem function --bias off --precision double --epochs 1 --platform "$platform"
        --compute calibrated --profile batcave-function --numerics off --allreduce rdb --quiet)
# eta 3 and b = 128 reach the target in 20 iterations (8.3 s of Bat Cave's time, 83 s at D = 10).
training=(train --problem function --bias off --precision double --block 128 --eta 3 --epochs 100
          --target-error 0.19 --np 4 --platform "$platform" --compute calibrated --profile batcave-function
          --allreduce rdb --seed 1)

# Waits while another process's testbed run is going (its namespaces, wulf-tb-PID.*, with
# PID alive): two testbeds at once share the 2 cores and disturb each other's times.
other_testbed() {  # prints the process id of another live testbed run, if any
  local ns pid
  for ns in $(ip netns list | awk '{print $1}'); do
    [[ $ns == wulf-tb-* ]] || continue
    pid=${ns#wulf-tb-}
    pid=${pid%%.*}
    [[ -d /proc/$pid ]] && echo "$pid" && return 0
  done
  return 0
}
wait_for_other_testbeds() {
  local busy said=""
  while busy=$(other_testbed) && [[ -n $busy ]]; do
    [[ -z $said ]] && echo "waiting for the testbed run of process $busy to end" >&2 && said=1
    sleep 5
  done
}
# Before the first run: a minute with no other testbed, since a tool such as wulf validate
# --testbed starts one testbed run after another with short gaps between them.
wait_for_quiet_minute() {
  local quiet=0
  while ((quiet < 60)); do
    if [[ -n $(other_testbed) ]]; then
      ((quiet == 0)) || echo "another testbed run started: waiting for a quiet minute again" >&2
      quiet=0
      wait_for_other_testbeds
    fi
    sleep 5
    quiet=$((quiet + 5))
  done
}
testbed() {  # testbed WULF_ARGS...: one testbed run of wulf, alone on the machine
  wait_for_other_testbeds
  "$wulf" "$@"
}

step_bench() {
  for k in 1 2 3; do
    testbed "${bench[@]}" --engine testbed --dilation "$dilation" --sizes "$sizes" \
      --out "$rec/bench-testbed-$k.json" > "$rec/bench-testbed-$k.txt"
  done
  "$wulf" "${bench[@]}" --sizes "$sizes" --out "$rec/bench-sim.json" > "$rec/bench-sim.txt"
  # The user's calibration: scale the platform's links so that its ping-pong is the testbed's.
  read -r bw lat < <("$python" "$here/compare.py" calibrate "$rec")
  "$wulf" "${bench[@]}" --sizes "$sizes" --bw-scale "$bw" --lat-scale "$lat" \
    --out "$rec/bench-sim-calibrated.json" > "$rec/bench-sim-calibrated.txt"
}

step_table7() {
  for p in 1 2 4 8; do
    for b in 16 32 64 128; do
      "$wulf" "${table7[@]}" --block "$b" --engine sim --np "$p" --out "$rec/t7-sim-p$p-b$b.json" > /dev/null
      "$wulf" "${table7[@]}" --block "$b" --engine sim --np "$p" --eager-limit "$eager" \
        --out "$rec/t7-sim-eager-p$p-b$b.json" > /dev/null
      testbed "${table7[@]}" --block "$b" --engine testbed --dilation "$dilation" --np "$p" \
        --out "$rec/t7-testbed-p$p-b$b.json" > "$rec/t7-testbed-p$p-b$b.txt"
    done
  done
}

step_again7() {
  # The cells that differ between SMPI's rendezvous and eager sending, twice more on the testbed.
  for k in 2 3; do
    for b in 16 32; do
      testbed "${table7[@]}" --block "$b" --engine testbed --dilation "$dilation" --np 8 \
        --out "$rec/t7-testbed-p8-b$b-run$k.json" > "$rec/t7-testbed-p8-b$b-run$k.txt"
    done
  done
}

step_train() {
  "$wulf" "${training[@]}" --engine sim --out "$rec/train-sim.json" > "$rec/train-sim.txt"
  testbed "${training[@]}" --engine testbed --dilation "$dilation" --out "$rec/train-testbed.json" \
    > "$rec/train-testbed.txt"
}

step_backtoback() {
  # Allreduces back to back, as training makes them (one barrier before the first call, none
  # between calls): the pattern of Table VII's small blocks, without the compute.
  local b2b=(platform bench "$platform" --collectives allreduce --np 4,8 --elements 4096,16768,54912
             --allreduce rdb --repeat 32 --back-to-back --no-pingpong)
  for k in 1 2 3; do
    testbed "${b2b[@]}" --engine testbed --dilation "$dilation" --out "$rec/b2b-testbed-$k.json" \
      > "$rec/b2b-testbed-$k.txt"
  done
  "$wulf" "${b2b[@]}" --out "$rec/b2b-sim.json" > "$rec/b2b-sim.txt"
  # The simulation with the testbed's protocol: messages up to 4 MiB sent eagerly.
  "$wulf" "${b2b[@]}" --eager-limit "$eager" --out "$rec/b2b-sim-eager.json" > "$rec/b2b-sim-eager.txt"
}

step_protocol() {
  local grid=(platform bench "$platform" --collectives allreduce --np 2,4,8 --repeat 3 --no-pingpong)
  "$wulf" "${grid[@]}" --out "$rec/protocol-grid-sim.json" > /dev/null
  for limit in 65536 "$eager"; do
    "$wulf" "${grid[@]}" --eager-limit "$limit" --out "$rec/protocol-grid-sim-$limit.json" > /dev/null
    testbed "${grid[@]}" --engine testbed --dilation "$dilation" --eager-limit "$limit" \
      --out "$rec/protocol-grid-testbed-$limit.json" > /dev/null
  done
  "$wulf" "${table7[@]}" --np 8 --block 16 --engine sim --out "$rec/protocol-vii-sim.json"
  for limit in 65536 "$eager"; do
    "$wulf" "${table7[@]}" --np 8 --block 16 --engine sim --eager-limit "$limit" --out "$rec/protocol-vii-sim-$limit.json"
    for k in 1 2 3; do
      testbed "${table7[@]}" --np 8 --block 16 --engine testbed --dilation "$dilation" --eager-limit "$limit" \
        --out "$rec/protocol-vii-testbed-$limit-$k.json"
    done
  done
}

step_states() {
  local calls=(platform bench "$platform" --collectives allreduce --np 8 --elements 16768 --allreduce rdb
               --repeat 64 --back-to-back --no-pingpong)
  for gap in 0 0.00136; do
    for k in 1 2 3 4; do
      testbed "${calls[@]}" --gap "$gap" --engine testbed --dilation "$dilation" \
        --out "$rec/states-testbed-$gap-$k.json" > /dev/null
    done
    "$wulf" "${calls[@]}" --gap "$gap" --out "$rec/states-sim-$gap.json" > /dev/null
    "$wulf" "${calls[@]}" --gap "$gap" --eager-limit "$eager" --out "$rec/states-sim-eager-$gap.json" > /dev/null
  done
}

step_diagnose() {
  # Twice the dilation: if a cell that misses at D = 10 comes closer, the 2 cores were saturated.
  testbed "${bench[@]}" --engine testbed --dilation 20 --sizes "$sizes" --out "$rec/bench-testbed-d20.json" \
    > "$rec/bench-testbed-d20.txt"
  # The ping-pong's shape between 1 byte and 1 MiB, both engines (no collectives beyond p = 2).
  local more=1,1024,8192,65536,262144,1048576
  testbed platform bench "$platform" --np 2 --collectives allreduce --elements 4096 --allreduce rdb \
    --repeat "$repeat" --sizes "$more" --engine testbed --dilation "$dilation" \
    --out "$rec/pingpong-testbed.json" > "$rec/pingpong-testbed.txt"
  "$wulf" platform bench "$platform" --np 2 --collectives allreduce --elements 4096 --allreduce rdb \
    --repeat "$repeat" --sizes "$more" --out "$rec/pingpong-sim.json" > "$rec/pingpong-sim.txt"
}

{ echo "run.sh ${steps[*]}"; uptime; nproc; lscpu | grep -E "Model name|^CPU\(s\)"; uname -r; } >> "$rec/machine.txt"
"$wulf" testbed check > "$rec/check.txt"
wait_for_quiet_minute
for step in "${steps[@]}"; do
  [[ $step == compare ]] && continue
  t0=$(now)
  "step_$step"
  echo "$step $(seconds_since "$t0")" >> "$rec/wall_s.txt"
done
[[ " ${steps[*]} " == *" compare "* ]] && "$python" "$here/compare.py" report "$rec" "$here" | tee "$here/results.txt"
exit 0
