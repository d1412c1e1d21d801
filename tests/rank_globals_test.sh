#!/usr/bin/env bash
# smpirun runs every rank of --engine sim in one process with one copy of wulf-rank-sim
# (smpi/privatization:no), so each global variable of the program is one for all ranks.
# Fails when the program holds a writable global of wulf's own that is not listed below
# with the reason one copy is right for every rank.
#   rank_globals_test.sh BUILD_DIR
set -u
program="$1/wulf-rank-sim"
[[ -f $program ]] || { echo "FAIL: no $program"; exit 1; }
source "$(dirname "$0")/skip.sh"
command -v objdump > /dev/null || skip "no objdump (binutils)"
# name: why one copy serves every rank
allowed=(
  "wulf::(anonymous namespace)::shared_nets|--numerics off's shared parameters and gradients, one for all ranks by design (sim/compute_sim.cpp)"
  "wulf::(anonymous namespace)::shared_scratches|the receives of unread sums, shared by all ranks by design (sim/compute_sim.cpp)"
  "wulf::MemoryEstimate::biggest() const::none|a constant, made on first use"
  "wulf::(anonymous namespace)::world_actors()::actors|each world rank's SimGrid actor, the same for every rank, made on first use (sim/s4u_messages.cpp)"
  "wulf::(anonymous namespace)::S4uMessages::S4uMessages(|the communicators each rank has made per set of ranks, keyed by the rank's actor (sim/s4u_messages.cpp)"
  "wulf::(anonymous namespace)::fifo_messages()::messages|--sim-messages fifo: each rank's messages, under the rank's own actor, so that its computation finds its own (sim/s4u_messages.cpp)"
  "wulf::engine_messages(|whether the platform charges an overhead per message, the same for every rank, made on first use (sim/s4u_messages.cpp)"
  "wulf::(anonymous namespace)::live_temp_mutex|the lock of the process's live temporary paths (util/files.cpp): one for all, as the list it guards"
  "wulf::(anonymous namespace)::live_temp|the process's live temporary files and folders (util/files.cpp), under live_temp_mutex: only the front end's runner reads it (without_temp_paths); a rank's own entries are its own paths"
)
# The program links wulf_rank alone (core/CMakeLists.txt): none of the front end's functions,
# and so none of its globals (the children, the signals, the time limit), is in it.
front=$(nm -C "$program" | grep -E " [TtWw] wulf::(run_child|run_children|install_signal_handlers|run_cli|sim_allocator)\(")
[[ -z $front ]] || { echo "FAIL: $program holds the front end's code: $front"; exit 1; }
# Writable objects (.data and .bss; .data.rel.ro is read-only once loaded), demangled.
found=$(objdump -t -C "$program" | awk '$4 == ".data" || $4 == ".bss" || $3 == ".data" || $3 == ".bss"' |
  sed -E 's/^.*\s[0-9a-f]{16}\s+//' | grep "wulf::" | grep -v "^guard variable for ")
[[ -n $found ]] || { echo "FAIL: objdump found no global of wulf's in $program (the check reads nothing)"; exit 1; }
status=0
while IFS= read -r name; do
  ok=0
  for entry in "${allowed[@]}"; do
    prefix="${entry%%|*}"
    if [[ $name == "$prefix"* ]]; then ok=1; echo "ok: $name: ${entry#*|}"; break; fi
  done
  if ((ok == 0)); then echo "FAIL: $name is a writable global of wulf-rank-sim, one for all simulated ranks"; status=1; fi
done <<< "$found"
exit $status
