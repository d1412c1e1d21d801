#!/usr/bin/env bash
# --timeout ends a run that takes too long on real and sim (its processes ended, SIGTERM
# then SIGKILL after the grace), with "timed out after N s" and exit 4, within the timeout
# and the grace; under mpirun a rank stopped with SIGSTOP is named.
#   timeout_test.sh BUILD_DIR PLATFORM
set -u
source "$(dirname "$0")/run_checks.sh"
setup_test "$1" "$2"
grace=3         # kGraceSeconds, engine/process.hpp
slack=10        # starting wulf and its runner on a busy machine
exit_timeout=4  # util/errors.hpp

# expect_timed_out NAME DIR SECONDS STARTED WHAT: wulf ended with exit 4 within SECONDS +
# grace + slack of STARTED (bash's $SECONDS), saying WHAT, leaving nothing.
expect_timed_out() {
  local name=$1 dir=$2 limit=$3 started=$4 what=$5
  wait_ended
  local took=$((SECONDS - started))
  [ "$code" -eq "$exit_timeout" ] || fail "$name: wulf exited $code: $(cat "$dir/err")"
  grep -qF "$what" "$dir/err" || fail "$name: no '$what' in: $(cat "$dir/err")"
  [ "$took" -le $((limit + grace + slack)) ] || fail "$name: it took $took s for --timeout $limit"
  expect_nothing_left "$dir"
  echo "$name: exit $code after $took s: $(grep -F "timed out" "$dir/err")"
}

# 1. A long run on each engine, ended by its --timeout.
started=$SECONDS
start_wulf "$tmp/real" train --problem encoder:8 --epochs 100000000 --quiet --engine real --np 2 --timeout 3
expect_timed_out "real" "$tmp/real" 3 $started "wulf: timed out after 3 s; ended mpirun's process group "

started=$SECONDS
start_wulf "$tmp/sim" train --problem encoder:8 --epochs 100000000 --quiet --engine sim --np 2 \
  --platform "$platform" --timeout 3
expect_timed_out "sim" "$tmp/sim" 3 $started "wulf: timed out after 3 s; ended smpirun's process group "

# 2. Under mpirun, rank 1 stopped (SIGSTOP): the run would wait for it forever; the timeout
# ends it and names the rank, by the pid it reported as it started.
started=$SECONDS
start_wulf "$tmp/stop" train --problem encoder:8 --epochs 100000000 --quiet --engine real --np 2 --timeout 8
wait_started "$tmp/stop" 2
victim=$(grep -h "^started 1 " "$tmp"/stop/tmp/wulf-status-* | cut -d' ' -f3)
session_processes "$wulf" | grep -q "^$victim " || fail "rank 1's pid '$victim' is no process of the run"
kill -STOP "$victim"
expect_timed_out "stopped rank" "$tmp/stop" 8 $started \
  "wulf: timed out after 8 s: rank 1 (pid $victim) is stopped; ended mpirun's process group "
echo "3 passed, 0 failed"
