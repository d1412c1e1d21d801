#!/usr/bin/env bash
# Issue 32 items 3 and 4: the testbed builds each platform's network as its routes give it
# (engine/testbed_network.hpp), and the simulation is compared with it on every platform.
#   1. fattree: tests/platforms/fattree8.xml, 8 hosts under two leaf switches whose one
#      uplink each is 4 to 1 oversubscribed: recursive doubling (its step at distance 4 sends
#      all 4 flows of a leaf through the uplink) against the ring (one flow each way), at
#      p = 4 (one leaf, no uplink) and 8, on both engines;
#   2. bunyip: platforms/bunyip-reduced.xml, seed 002's tetrahedron at 4 groups of 4 nodes
#      and a server (17 ranks): the library's binomial reduce (Open MPI's tree on both
#      engines), wulf's own binomial reduce (the same messages from wulf's point-to-point
#      calls) and seed 002's four-stage reduce of 262 144 floats (1 MiB), on both engines,
#      each with both protocols: messages
#      up to 64 KiB sent at once, larger ones only once the receive is posted (SMPI's default,
#      and Open MPI's with --eager-limit 65536), and all sent at once (the testbed's default
#      eager limit, 4 MiB; the simulation with --eager-limit 4194304);
#   3. platforms: `wulf validate --testbed --platform P` for messner, bunyip-reduced, ppt-p4,
#      dt42 and sorgan: the allreduce and reduce grid and one training run, both engines.
# compare.py prints the tables into results.txt, writes results.json and draws topology.png.
#
#   experiments/testbed-topology/run.sh [build dir] [fattree] [bunyip] [platforms] [compare]
#
# Needs root (network namespaces) and an otherwise idle machine: the testbed's times are the
# wall clock's. About 8 minutes on 2 cores.
# shellcheck source=SCRIPTDIR/../common.sh disable=SC2317  # steps called as step_$name
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "${1:-}"
shift || true
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(fattree bunyip platforms compare)
rec="$out/records"
mkdir -p "$rec"
cd "$root"  # record platform paths relative to the repository

step_fattree() {
  for engine in sim testbed; do
    for alg in rdb ring; do
      "$wulf" platform bench tests/platforms/fattree8.xml --engine "$engine" --np 4,8 --collectives allreduce \
        --allreduce "$alg" --elements 16768,54912 --repeat 3 --no-pingpong --out "$rec/fattree-$engine-$alg.json" >/dev/null
    done
  done
}

step_bunyip() {
  for engine in sim testbed; do
    for reduce in binomial wulf-binomial four-stage; do
      for eager in 65536 4194304; do
        "$wulf" platform bench platforms/bunyip-reduced.xml --engine "$engine" --np 17 --collectives reduce \
          --reduce "$reduce" --type float --elements 262144 --repeat 3 --no-pingpong --eager-limit "$eager" \
          --out "$rec/bunyip-$engine-$reduce-$eager.json" >/dev/null
      done
    done
  done
}

step_platforms() {
  for p in messner bunyip-reduced ppt-p4 dt42 sorgan; do
    "$wulf" validate --testbed --platform "platforms/$p.xml" --out "$rec/validate-$p.json" > "$rec/validate-$p.txt"
  done
}

step_compare() {
  "$python" "$here/compare.py" "$rec" "$out"
}

for step in "${steps[@]}"; do
  start=$(now)
  "step_$step"
  echo "$step: $(seconds_since "$start") s" >&2
done
