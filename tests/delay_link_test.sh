#!/usr/bin/env bash
# `wulf testbed delay` returns only once the forwarder it leaves has a session of its own.
# Whoever runs the command ends what is left of its process group when it exits (the
# testbed's set-up runs it by engine/process.hpp's run_child). On a loaded machine a forwarder
# that had not yet called setsid() was ended so: its link was cut, and Open MPI's daemons
# failed to start ("No route to host"; the testbed tests failed under load). Here setsid() is
# made to wait half a second (SHIM, preloaded), the command runs in a process group of its
# own, and the group is killed whole as soon as the command returns: the forwarder must live.
# Skipped (exit 77) where this machine cannot build the testbed.
#   delay_link_test.sh BUILD_DIR PLATFORM SHIM
set -u
source "$(dirname "$0")/run_checks.sh"
setup_test "$1" "$2"
shim=$3
require_testbed

# A namespace of this test's own (not wulf-tb-: testbed runs remove those whose run is gone),
# with two veth pairs: the forwarder's two ports and their far ends.
ns=wulf-delay-test-$$
trap 'for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p"; done; ip netns del "$ns" 2>/dev/null
      for s in $sessions; do end_session $s; done; rm -rf "$tmp"' EXIT
ip netns add "$ns" || fail "cannot make namespace $ns"
for pair in "da xa" "db xb"; do
  set -- $pair
  ip -n "$ns" link add "$1" type veth peer name "$2" || fail "cannot make veth $1"
  ip -n "$ns" link set "$1" up && ip -n "$ns" link set "$2" up || fail "cannot set $1 up"
done

# The command in a group of its own; its exit code kept; then the whole group killed.
setsid -w bash -c 'LD_PRELOAD="$3" ip netns exec "$0" "$1" testbed delay da db 0.001 0.001 >"$2/out" 2>&1
                   echo $? >"$2/code"; kill -KILL 0' "$ns" "$build/wulf" "$tmp" "$shim"
[ "$(cat "$tmp/code")" = 0 ] || fail "wulf testbed delay exited $(cat "$tmp/code"): $(cat "$tmp/out")"
sleep 0.2
forwarder=$(ip netns pids "$ns")
[ -n "$forwarder" ] || fail "the forwarder was ended with the process group of the command that started it"
[ "$(echo $forwarder | wc -w)" -eq 1 ] || fail "more than one process in the namespace: $forwarder"
read -r line <"/proc/$forwarder/stat"
set -- ${line##*) }  # state ppid pgrp session ...
[ "$4" = "$forwarder" ] || fail "the forwarder $forwarder is not the leader of a session of its own (session $4)"
echo "the forwarder $forwarder outlived its command's process group, in a session of its own"
echo "PASSED"
