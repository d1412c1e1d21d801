# Shell helpers of the tests that start `wulf` and check what it leaves behind (sourced).
# A run's processes are found only by the run's own session: wulf is started by setsid,
# so its pid is the session's id, and every process it starts stays in that session.
# Never by a name across the machine.
# shellcheck source=SCRIPTDIR/skip.sh
source "$(dirname "${BASH_SOURCE[0]}")/skip.sh"

# The start every test script shares: $build and $platform (made absolute: wulf runs in a
# folder of its own) from its two arguments, a scratch folder $tmp, Open MPI's consent to
# run as root, and on exit every session the script started ended and $tmp removed.
# shellcheck disable=SC2034  # the variables are the sourcing script's
setup_test() {
  build=$1
  platform=$(realpath "$2")
  tmp=$(mktemp -d)
  sessions=""
  trap 'for s in $sessions; do end_session $s; done; rm -rf "$tmp"' EXIT
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

fail() { echo "FAILED: $*"; exit 1; }

# Skips the test (skip.sh) with the reason where this machine cannot build the testbed (not
# root, no iproute2, no tbf).
require_testbed() {
  local why
  why=$("$build/wulf" testbed check) || skip "$why"
}

# The live processes of session $1 (zombies are dead; this machine's init may not reap
# them): one "pid state name" line each.
session_processes() {
  local sid=$1 f line name rest
  for f in /proc/[0-9]*/stat; do
    read -r line 2>/dev/null <"$f" || continue
    name=${line#*(}
    name=${name%)*}
    rest=${line##*) }
    set -- $rest  # state ppid pgrp session ...
    if [ "$4" = "$sid" ] && [ "$1" != Z ]; then
      f=${f#/proc/}
      echo "${f%/stat} $1 $name"
    fi
  done
}

# Kills what is left of session $1 (a failed test must not leave a run behind).
end_session() {
  local pid
  for pid in $(session_processes "$1" | cut -d' ' -f1); do kill -9 "$pid" 2>/dev/null; done
}

# launch_wulf DIR ARGS...: `wulf ARGS` in a session of its own, in DIR/cwd, its temporary
# files in DIR/tmp, its output in DIR/out and DIR/err, with SIGINT at its default (a shell
# starts background commands with SIGINT ignored). Sets $wulf to its pid (and session).
launch_wulf() {
  local dir=$1
  shift
  mkdir -p "$dir/tmp" "$dir/cwd"
  (cd "$dir/cwd" && TMPDIR="$dir/tmp" exec env --default-signal=INT,TERM,HUP setsid "$build/wulf" "$@" \
    >"$dir/out" 2>"$dir/err") &
  wulf=$!
  sessions="$sessions $wulf"
}

# start_wulf DIR ARGS...: launch_wulf, then waits until wulf leads its session.
start_wulf() {
  launch_wulf "$@"
  local dir=$1 sid
  for _ in $(seq 50); do
    sid=$(session_processes "$wulf" | head -n 1)
    [ -n "$sid" ] && break
    sleep 0.1
  done
  [ -n "$sid" ] || fail "wulf $wulf is not the leader of a session of its own: $(cat "$dir/err" 2>/dev/null)"
}

# wait_started DIR N: waits until N ranks wrote "started" into the run's status file.
wait_started() {
  for _ in $(seq 600); do
    [ "$(cat "$1"/tmp/wulf-status-* 2>/dev/null | grep -c '^started ')" -ge "$2" ] && return 0
    kill -0 "$wulf" 2>/dev/null || fail "wulf ended before $2 ranks started: $(cat "$1/err")"
    sleep 0.1
  done
  fail "$2 ranks did not start in 60 s: $(cat "$1/err")"
}

# wait_ended: waits (at most 60 s) for wulf to end; sets $code to its exit code.
wait_ended() {
  for _ in $(seq 600); do
    kill -0 "$wulf" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$wulf" 2>/dev/null && fail "wulf still runs 60 s later"
  wait "$wulf"
  code=$?
}

# expect_nothing_left DIR: no process of the run's session lives, and its temporary folder
# and its working folder are empty.
expect_nothing_left() {
  local left
  left=$(session_processes "$wulf")
  [ -z "$left" ] || fail "processes of the run are left: $left"
  left=$(ls -A "$1/tmp" "$1/cwd" | grep -v ':$' | grep -v '^$')
  [ -z "$left" ] || fail "files of the run are left: $(ls -lA "$1/tmp" "$1/cwd")"
}
