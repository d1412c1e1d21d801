#!/usr/bin/env bash
# SIGKILL gives wulf no chance to remove its temporary files and folders: Open MPI's session
# folder (wulf-mpi-*), the ranks' status file, smpirun's hostfile, job and SimGrid's copies of
# the rank program (wulf-smpi-*). Each carries its owner's pid and start time, so the next
# run, or `wulf clean`, removes what the killed run left, and never what a live run holds.
#   leftovers_test.sh BUILD_DIR PLATFORM
set -u
source "$(dirname "$0")/run_checks.sh"
setup_test "$1" "$2"

# left DIR: the names in DIR's temporary folder, one line.
left() { ls -A "$1/tmp" | sort | tr '\n' ' '; }

# killed ENGINE DIR: a long run on ENGINE in DIR, killed with SIGKILL once its ranks run; its
# processes ended (the ranks end with their front end), its temporary files left.
killed() {
  local engine=$1 dir=$2
  case $engine in
    real) start_wulf "$dir" train --problem encoder:8 --epochs 100000000 --quiet --engine real --np 2 ;;
    sim) start_wulf "$dir" train --problem encoder:8 --epochs 100000000 --quiet --engine sim --np 2 \
           --platform "$platform" ;;
  esac
  # its own status file: another run's may share the folder
  for _ in $(seq 600); do
    [ "$(cat "$dir"/tmp/wulf-status-"$wulf".* 2>/dev/null | grep -c '^started ')" -ge 2 ] && break
    kill -0 "$wulf" 2>/dev/null || fail "$engine: wulf ended before its ranks started: $(cat "$dir/err")"
    sleep 0.1
  done
  kill -KILL "$wulf"
  for _ in $(seq 100); do [ -z "$(session_processes "$wulf")" ] && break; sleep 0.1; done
  end_session "$wulf"
  wait "$wulf" 2>/dev/null
}

# 1. --engine real: the session folder and the status file stay; `wulf clean` removes them
#    but not those of a run that still goes in the same temporary folder (started first: a
#    run that starts removes what killed runs left).
start_wulf "$tmp/a" train --problem encoder:8 --epochs 100000000 --quiet --engine real --np 2
live=$wulf
wait_started "$tmp/a" 2
mkdir -p "$tmp/b"
ln -s "$tmp/a/tmp" "$tmp/b/tmp"  # the killed run shares the live one's temporary folder
killed real "$tmp/b"
theirs() { ls -A "$tmp/a/tmp" | grep -v -- "-$live\." | sort | tr '\n' ' '; }
mine() { ls -A "$tmp/a/tmp" | grep -- "-$live\." | sort | tr '\n' ' '; }
dead="$(theirs)"
case "$dead" in *wulf-mpi-*wulf-status-*) ;; *) fail "real: SIGKILL left no session folder and status file: $dead" ;; esac
held="$(mine)"
case "$held" in *wulf-mpi-*wulf-status-*) ;; *) fail "the live run holds no files of its own: $held" ;; esac
said=$(TMPDIR="$tmp/a/tmp" "$build/wulf" clean) || fail "wulf clean failed: $said"
echo "$said" | grep -q "^wulf clean: removed 2 temporary files or folders" || fail "wulf clean said: $said"
[ -z "$(theirs)" ] || fail "the killed run's files are left: $(theirs)"
[ "$(mine)" = "$held" ] || fail "wulf clean took the live run's files: $held -> $(mine)"
kill -0 "$live" || fail "the live run ended"
echo "real: SIGKILL left $dead; wulf clean removed them and kept the live run's $held"
wulf=$live
kill -TERM "$live"
wait_ended
[ -z "$(left "$tmp/a")" ] || fail "the live run left $(left "$tmp/a")"

# 2. --engine sim: the next run removes what the killed one left.
killed sim "$tmp/c"
dead="$(left "$tmp/c")"
for what in hostfile job smpi status; do
  case "$dead" in *wulf-$what-*) ;; *) fail "sim: SIGKILL left no wulf-$what-*: $dead" ;; esac
done
(cd "$tmp/c/cwd" && TMPDIR="$tmp/c/tmp" "$build/wulf" train --problem encoder:8 --epochs 1 --quiet >/dev/null) ||
  fail "the next run failed"
[ -z "$(left "$tmp/c")" ] || fail "the next run left the killed run's files: $(left "$tmp/c")"
echo "sim: SIGKILL left $dead; the next run removed them"
echo "2 passed, 0 failed"
