#!/usr/bin/env bash
# A rank that dies ends the whole run, with the rank named by wulf itself, and never hangs.
# A fault only a rank can see (a data file that vanished) ends the run the same way.
#   engine_failures.sh BUILD_DIR PLATFORM
set -u
source "$(dirname "$0")/run_checks.sh"
setup_test "$1" "$2"

# 1. Under mpirun: kill one rank of a long run from outside. The rank is found by the pid
# it reported into the run's status file, and is checked to be a process of the run's own
# session (wulf runs in a session of its own).
start_wulf "$tmp/real" train --problem digits --epochs 1000 --engine real --np 2
wait_started "$tmp/real" 2
for _ in $(seq 300); do grep -q "^iter" "$tmp/real/out" && break; sleep 0.1; done
victim=$(grep -h "^started 1 " "$tmp"/real/tmp/wulf-status-* | cut -d' ' -f3)
session_processes "$wulf" | grep -q "^$victim [^ ]* wulf-rank-real$" || fail "rank 1's pid '$victim' is no rank of the run"
kill -9 "$victim"
wait_ended
[ $code -ne 0 ] || fail "wulf exited 0 after a rank was killed"
# wulf's own line, not Open MPI's banner, names the rank and how it ended.
said="wulf train: the mpirun run failed (code $code): rank 1 (pid $victim) was killed by SIGKILL"
grep -qF "$said" "$tmp/real/err" || fail "wulf does not name the killed rank: $(cat "$tmp/real/err")"
expect_nothing_left "$tmp/real"
echo "mpirun: a killed rank ended the run with code $code:"
grep -F "wulf train:" "$tmp/real/err"

# The job of a record NAME.json (its config, as wulf hands it to its ranks) into NAME-job.json.
job_of() {
  python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))["config"], open(sys.argv[2], "w"))' \
    "$tmp/$1.json" "$tmp/$1-job.json"
}
# Runs the job of NAME under smpirun on 2 ranks, outside wulf; the ranks must end the
# simulation (no hang), each write "2 RANK error: ...WHAT..." to the status file, and name
# themselves on stderr.
printf 'toy-0\ntoy-1\n' >"$tmp/hosts"
export WULF_STATUS_FILE="$tmp/status"
expect_ranks_refuse() {  # NAME WHAT
  : >"$tmp/status"
  (cd "$tmp" && timeout 60 smpirun -np 2 -platform "$platform" -hostfile "$tmp/hosts" \
    --cfg=smpi/simulate-computation:no --log=root.thres:critical "$build/wulf-rank-sim" --job "$tmp/$1-job.json" \
    >"$tmp/$1-out" 2>"$tmp/$1-err")
  [ $? -ne 124 ] || fail "$1: smpirun hung after the ranks aborted"
  grep -q "^2 [01] error: .*$2" "$tmp/status" || fail "$1: no status of the failing rank: $(cat "$tmp/status")"
  grep -q "wulf (rank [01] of 2): error" "$tmp/$1-err" || fail "$1: the failing rank is not named: $(cat "$tmp/$1-err")"
  cat "$tmp/status"
}

# 2. Under smpirun: every rank finds a fault only ranks can see (started with fewer ranks
# than the job says); the simulation ends, and the status file names the ranks. The status
# file is the front end's: the ranks only append to it.
"$build/wulf" train --problem encoder:8 --epochs 0 --engine sim --np 4 --platform "$platform" -q \
  --out "$tmp/four.json" >/dev/null || fail "the run of 4 ranks failed"
job_of four
echo "smpirun: the aborting ranks are named:"
expect_ranks_refuse four "the job is for 4 ranks but 2 were started"

# 3. A data file that vanished after the front end resolved the job: the ranks read it
# themselves (the job holds its path, never the data), and the one that cannot says which
# file, with its rank named.
cp /usr/share/doc/libfann-dev/examples/datasets/xor.data "$tmp/xor.data" 2>/dev/null ||
  printf '4 2 1\n-1 -1\n-1\n-1 1\n1\n1 -1\n1\n1 1\n-1\n' >"$tmp/xor.data"
"$build/wulf" train --problem "fann:$tmp/xor.data" --learning epoch --epochs 0 --engine sim --np 2 \
  --platform "$platform" -q --out "$tmp/xor.json" >/dev/null || fail "the fann run failed"
job_of xor
rm "$tmp/xor.data"
echo "smpirun: a vanished data file is named by the rank that read it:"
expect_ranks_refuse xor "xor.data: no such file"
echo "3 passed, 0 failed"
