#!/usr/bin/env bash
# A rank that dies ends the whole run, with the rank named, and never hangs.
#   engine_failures.sh BUILD_DIR PLATFORM
set -u
build=$1
platform=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill -9 $(jobs -p) 2>/dev/null' EXIT
fail() { echo "FAILED: $*"; exit 1; }

# 1. Under mpirun: kill one rank of a long run from outside.
"$build/wulf" train --problem digits --epochs 1000 --engine real --np 2 >"$tmp/out" 2>"$tmp/err" &
wulf=$!
victim=""
for _ in $(seq 300); do
  victim=$(pgrep -f "wulf-rank-real .*--epochs 1000" | tail -n 1)
  [ -n "$victim" ] && grep -q "^iter" "$tmp/out" && break
  sleep 0.1
done
[ -n "$victim" ] || fail "no rank process appeared"
kill -9 "$victim"
for _ in $(seq 300); do kill -0 $wulf 2>/dev/null || break; sleep 0.1; done
kill -0 $wulf 2>/dev/null && fail "wulf still runs 30 s after a rank was killed"
wait $wulf
code=$?
[ $code -ne 0 ] || fail "wulf exited 0 after a rank was killed"
grep -q "rank" "$tmp/err" || fail "the failing rank is not named: $(cat "$tmp/err")"
echo "mpirun: a killed rank ended the run with code $code:"
grep -i "rank" "$tmp/err" | head -n 3

# 2. Under smpirun: every rank finds a fault only ranks can see (started with fewer ranks
# than --np says); the simulation ends, and the status file names the ranks.
printf 'toy-0:1\ntoy-1:1\n' >"$tmp/hosts"
export WULF_STATUS_FILE="$tmp/status"
timeout 60 smpirun -np 2 -platform "$platform" -hostfile "$tmp/hosts" --cfg=smpi/simulate-computation:no \
  --log=root.thres:critical "$build/wulf-rank-sim" --problem encoder:8 --engine sim --np 4 --platform "$platform" \
  >"$tmp/sim-out" 2>"$tmp/sim-err"
[ $? -ne 124 ] || fail "smpirun hung after the ranks aborted"
grep -q "^2 [01] error: --np 4 but 2 ranks were started" "$tmp/status" || fail "no status of the failing rank: $(cat "$tmp/status" 2>/dev/null)"
grep -q "wulf (rank [01] of 2): error" "$tmp/sim-err" || fail "the failing rank is not named: $(cat "$tmp/sim-err")"
echo "smpirun: the aborting ranks are named:"
cat "$tmp/status"
echo "1 passed, 0 failed"
