#!/usr/bin/env bash
# --engine testbed, what a run leaves: a training run's record (engine testbed, the dilation,
# the platform's hosts); nothing left after success, SIGTERM, SIGKILL in a run across three
# switches (the run's guardian), or (after `wulf testbed clean`) SIGKILL of wulf and its
# guardian. No time is compared here, so it runs beside other tests (testbed_test.sh holds
# the timings, alone). Skipped (exit 77) with the reason where this machine cannot build the
# testbed.
#   testbed_lifecycle_test.sh BUILD_DIR PLATFORM
set -u
source "$(dirname "$0")/run_checks.sh"
setup_test "$1" "$2"

require_testbed

# The namespaces of wulf process $1's runs (wulf-tb-<pid>.<start>-<role>).
namespaces_of() { ip netns list | awk '{print $1}' | grep "^wulf-tb-$1\." || true; }

# 1. A training run on the testbed writes the usual record: engine testbed, the dilation,
# the platform's hosts as the ranks' hosts, every time in the platform's seconds.
start_wulf "$tmp/train" train --problem encoder:8 --epochs 3 --engine testbed --np 2 --platform "$platform" \
  --dilation 10 --out "$tmp/train/rec.json"
wait_ended
[ "$code" -eq 0 ] || fail "train on the testbed exited $code: $(cat "$tmp/train/err")"
python3 - "$tmp/train/rec.json" <<'EOF' || fail "the testbed's record"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["config"]
assert c["engine"] == "testbed" and c["testbed"]["dilation"] == 10, c
assert r["hosts"] == ["batcave-0", "batcave-1"], r["hosts"]
# No --allreduce: Open MPI 4.1's choice for 2 ranks and the gradients, named and forced.
assert c["collectives"]["allreduce"] in ("rdb", "ring", "rabenseifner"), c["collectives"]
assert c["allreduce_chosen_by"].startswith("default, Open MPI 4.1's choice for 2 ranks and "), c["allreduce_chosen_by"]
assert c["testbed"]["open_mpi"]["btl_tcp_eager_limit"] == 4194304 and c["eager_limit_bytes"] is None, c
assert len(r["history"]) == 4 and r["final"]["time_s"] > 0, r["final"]
print("train: hosts", r["hosts"], "time", r["final"]["time_s"], "s")
EOF
expect_nothing_left "$tmp/train"
[ -z "$(namespaces_of "$wulf")" ] || fail "namespaces left after a run: $(namespaces_of "$wulf")"

# 2. SIGTERM in the middle of a run: every process and namespace of it goes.
start_wulf "$tmp/term" train --problem encoder:8 --epochs 100000000 --quiet --engine testbed --np 2 \
  --platform "$platform" --dilation 10
wait_started "$tmp/term" 2
kill -TERM "$wulf"
wait_ended
[ "$code" -eq 143 ] || fail "SIGTERM: wulf exited $code: $(cat "$tmp/term/err")"
grep -q "mpirun's process group" "$tmp/term/err" || fail "SIGTERM: the message names no mpirun: $(cat "$tmp/term/err")"
expect_nothing_left "$tmp/term"
[ -z "$(namespaces_of "$wulf")" ] || fail "namespaces left after SIGTERM: $(namespaces_of "$wulf")"
echo "SIGTERM: exit $code, nothing left"

# 3. SIGKILL of wulf in the middle of a run across three switches (a fat tree's two leaves
# and its top): its guardian removes every namespace (and so every veth and qdisc in them)
# and the processes inside, without help.
fattree="$(cd "$(dirname "$0")" && pwd)/platforms/fattree8.xml"
start_wulf "$tmp/kill" train --problem encoder:8 --epochs 100000000 --quiet --engine testbed --np 2 \
  --platform "$fattree" --hosts ft8-0,ft8-4 --dilation 10
wait_started "$tmp/kill" 2
killed=$wulf
made=$(namespaces_of "$killed" | wc -l)
# 2 hosts, 3 switches and a namespace for each of the 4 links' latency (the hosts' and the
# uplinks' cables), whose forwarders run in a session of their own.
[ "$made" -eq 9 ] || fail "the run across the fat tree made $made namespaces, not 2 hosts, 3 switches and 4 delays"
forwarders=$(for ns in $(namespaces_of "$killed" | grep -- '-d[0-9]*$'); do ip netns pids "$ns"; done)
[ "$(echo $forwarders | wc -w)" -eq 4 ] || fail "not a forwarder a delayed link: '$forwarders'"
kill -KILL "$killed"
wait "$killed" 2>/dev/null
for _ in $(seq 1 100); do [ -z "$(namespaces_of "$killed")" ] && break; sleep 0.1; done
[ -z "$(namespaces_of "$killed")" ] || fail "SIGKILL: namespaces left 10 s after: $(namespaces_of "$killed")"
left=$(session_processes "$killed")
[ -z "$left" ] || fail "processes of the killed run are left: $left"
for pid in $forwarders; do  # ended: gone, or a zombie until PID 1 reaps it
  state=$(ps -o stat= -p "$pid" || true)
  [ -z "$state" ] || [ "${state:0:1}" = Z ] || fail "forwarder $pid of the killed run is left ($state)"
done
echo "SIGKILL: the guardian removed its $made namespaces and processes"

# 4. SIGKILL of wulf and its guardian leaves the namespaces; `wulf testbed clean` removes them.
start_wulf "$tmp/kill2" train --problem encoder:8 --epochs 100000000 --quiet --engine testbed --np 2 \
  --platform "$platform" --dilation 10
wait_started "$tmp/kill2" 2
killed=$wulf
guardian=$(ps --ppid "$killed" -o pid=,args= | awk '/testbed guard/ {print $1}')
[ -n "$guardian" ] || fail "the run has no guardian"
kill -KILL "$guardian" "$killed"
wait "$killed" 2>/dev/null
[ -n "$(namespaces_of "$killed")" ] || fail "SIGKILL of both: no namespaces of the killed run to clean"
"$build/wulf" testbed clean || fail "wulf testbed clean failed"
[ -z "$(namespaces_of "$killed")" ] || fail "namespaces left after clean: $(namespaces_of "$killed")"
left=$(session_processes "$killed")
[ -z "$left" ] || fail "processes of the killed run are left after clean: $left"
echo "SIGKILL of wulf and its guardian: wulf testbed clean removed its namespaces and processes"

echo "PASSED"
