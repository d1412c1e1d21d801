#!/usr/bin/env bash
# `wulf testbed run`: any program on a platform's emulated cluster. One part a CTest test:
#   env       every rank gets torchrun's environment in its host's namespace, under the
#             platform's host name, and reaches rank 0's MASTER_ADDR:MASTER_PORT across the
#             emulated network (one rank a host, then 2 ranks a host of Bunyip's 2-core hosts),
#             and torch.distributed's gloo needs nothing more (where PyTorch is installed);
#   mpirun    --launcher mpirun runs an MPI launch across the hosts (`hostname` on each);
#   failures  a rank that fails ends the others at once; SIGTERM, --timeout and SIGKILL of
#             wulf end every rank and leave nothing (the guardian, for SIGKILL);
#   inputs    bad input exits 2 naming the option, before anything is built.
# No time is compared, so it runs beside other tests. Skipped (exit 77) with the reason where
# this machine cannot build the testbed.
#   testbed_run_test.sh BUILD_DIR PLATFORM PART
set -u
source "$(dirname "$0")/run_checks.sh"
setup_test "$1" "$2"
part=$3
platforms=$(cd "$(dirname "$0")/../platforms" && pwd)

require_testbed

# The namespaces of wulf process $1's runs (wulf-tb-<pid>.<start>-<role>).
namespaces_of() { ip netns list | awk '{print $1}' | grep "^wulf-tb-$1\." || true; }

# expect_gone DIR: nothing of the run is left, namespaces included.
expect_gone() {
  expect_nothing_left "$1"
  [ -z "$(namespaces_of "$wulf")" ] || fail "namespaces left: $(namespaces_of "$wulf")"
}

# run_wulf DIR ARGS...: `wulf ARGS` to its end (launch_wulf: a refusal may end before
# start_wulf finds its session); sets $wulf and $code.
run_wulf() {
  launch_wulf "$@"
  wait "$wulf"
  code=$?
}

# wait_files DIR N: waits until N ranks left their mark (started-R) in DIR.
wait_files() {
  local marks
  for _ in $(seq 300); do
    marks=("$1"/started-*)
    [ -e "${marks[0]}" ] && [ "${#marks[@]}" -ge "$2" ] && return 0
    kill -0 "$wulf" 2>/dev/null || fail "wulf ended before $2 ranks started"
    sleep 0.1
  done
  fail "$2 ranks did not start in 30 s"
}

case "$part" in
env)
  # Each rank writes its environment and hostname, then rank 0 listens at MASTER_ADDR:MASTER_PORT
  # and every other rank connects there: rank 0 notes the address each came from.
  cat >"$tmp/rank.py" <<'EOF'
import json, os, socket, sys, time
out, rank = sys.argv[1], int(os.environ["RANK"])
with open(f"{out}/env-{rank}.json", "w") as f:
    json.dump({**os.environ, "hostname": socket.gethostname()}, f)
print(f"rank {rank} says hello")
print(f"rank {rank} to its error stream", file=sys.stderr)
addr, port, world = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), int(os.environ["WORLD_SIZE"])
if rank == 0:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(world)
    s.settimeout(30)
    peers = {}
    for _ in range(world - 1):
        c, (peer, _) = s.accept()
        with c, c.makefile("rw") as f:
            peers[int(f.readline())] = peer
            f.write(f"hello from {socket.gethostname()}\n")
    with open(f"{out}/peers.json", "w") as f:
        json.dump(peers, f)
else:
    end = time.time() + 30
    while True:
        try:
            c = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            if time.time() > end:
                raise
            time.sleep(0.1)
    with c, c.makefile("rw") as f:
        f.write(f"{rank}\n")
        f.flush()
        with open(f"{out}/reply-{rank}", "w") as r:
            r.write(f.readline().strip())
EOF
  # check.py RUN_DIR HOSTS_PER_RANK LOCAL_WORLD PORT: the files the ranks wrote and the record.
  cat >"$tmp/check.py" <<'EOF'
import json, sys
run, hosts, local_world, port = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), sys.argv[4]
rec = json.load(open(f"{run}/logs/run.json"))
assert rec["kind"] == "testbed_run" and rec["config"]["launcher"] == "env", rec["config"]
assert rec["config"]["hosts"] == hosts and rec["config"]["np"] == len(hosts), rec["config"]
assert rec["testbed"]["dilation"] == 1, rec["testbed"]["dilation"]
assert "ended" not in rec and set(rec["machine"]) >= {"cores", "loadavg_before", "loadavg_after", "cpu_steal_s",
                                                       "cpu_busy_s"}, rec["machine"]
ranks = rec["ranks"]
master = ranks[0]["address"]
assert master.startswith("198.18.") and rec["config"]["master_addr"] == master, rec["config"]
groups = list(dict.fromkeys(hosts))
peers = json.load(open(f"{run}/files/peers.json"))
for r, rank in enumerate(ranks):
    env = json.load(open(f"{run}/files/env-{r}.json"))
    host = hosts[r]
    expect = {"RANK": r, "LOCAL_RANK": hosts[:r].count(host), "WORLD_SIZE": len(hosts),
              "LOCAL_WORLD_SIZE": local_world, "GROUP_RANK": groups.index(host), "GROUP_WORLD_SIZE": len(groups),
              "ROLE_RANK": r, "ROLE_WORLD_SIZE": len(hosts), "MASTER_ADDR": master, "MASTER_PORT": port,
              "GLOO_SOCKET_IFNAME": "eth0", "NCCL_SOCKET_IFNAME": "eth0", "WULF_TESTBED_HOST": host,
              "hostname": host, "WULF_TEST_KEPT": "kept"}
    for k, v in expect.items():
        assert env.get(k) == str(v), (r, k, env.get(k), v)
    assert rank["rank"] == r and rank["host"] == host and rank["exit_code"] == 0 and rank["ended_by"] is None, rank
    assert rank["local_rank"] == expect["LOCAL_RANK"], rank
    assert open(rank["stdout"]).read() == f"rank {r} says hello\n", rank["stdout"]
    assert open(rank["stderr"]).read() == f"rank {r} to its error stream\n", rank["stderr"]
    if r > 0:
        # It reached rank 0 from its own host's address, across the emulated network.
        assert peers[str(r)] == rank["address"], (r, peers, rank)
        assert open(f"{run}/files/reply-{r}").read() == f"hello from {hosts[0]}", r
print("ranks", [(r["rank"], r["host"], r["address"], r["local_rank"]) for r in ranks])
EOF
  export WULF_TEST_KEPT=kept
  mkdir -p "$tmp/one/files"
  run_wulf "$tmp/one" testbed run --platform "$platform" --np 4 --master-port 29611 --logs "$tmp/one/logs" \
    -- python3 "$tmp/rank.py" "$tmp/one/files"
  [ "$code" -eq 0 ] || fail "4 ranks on 4 hosts: wulf exited $code: $(cat "$tmp/one/err"; cat "$tmp/one"/logs/*.err)"
  grep -q "^testbed: 4 hosts of .*time dilation 1 " "$tmp/one/out" || fail "no testbed printed: $(cat "$tmp/one/out")"
  python3 "$tmp/check.py" "$tmp/one" batcave-0,batcave-1,batcave-2,batcave-3 1 29611 || fail "4 ranks on 4 hosts"
  expect_gone "$tmp/one"

  # Bunyip's hosts have 2 cores: 2 ranks a host, the default port.
  mkdir -p "$tmp/two/files"
  run_wulf "$tmp/two" testbed run --platform "$platforms/bunyip.xml" --np 4 --ranks-per-host 2 \
    --logs "$tmp/two/logs" --quiet -- python3 "$tmp/rank.py" "$tmp/two/files"
  [ "$code" -eq 0 ] || fail "2 ranks a host: wulf exited $code: $(cat "$tmp/two/err"; cat "$tmp/two"/logs/*.err)"
  [ ! -s "$tmp/two/out" ] || fail "--quiet printed: $(cat "$tmp/two/out")"
  python3 "$tmp/check.py" "$tmp/two" bunyip-A-0,bunyip-A-0,bunyip-A-1,bunyip-A-1 2 29500 || fail "2 ranks a host"
  expect_gone "$tmp/two"

  # torch.distributed's gloo, where a Python here has PyTorch: the environment is all it needs.
  torch_python=""
  for p in python3 /usr/bin/python3; do
    if "$p" -c 'import torch.distributed' 2>/dev/null; then torch_python=$p; break; fi
  done
  if [ -z "$torch_python" ]; then
    echo "no Python here has PyTorch: torch.distributed not tried"
  else
    cat >"$tmp/gloo.py" <<'EOF'
import torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.full((1000,), float(dist.get_rank() + 1))
dist.all_reduce(t)
print(t[0].item())
EOF
    run_wulf "$tmp/gloo" testbed run --platform "$platform" --np 3 --logs "$tmp/gloo/logs" --quiet --timeout 60 \
      -- "$torch_python" "$tmp/gloo.py"
    [ "$code" -eq 0 ] || fail "gloo: wulf exited $code: $(cat "$tmp/gloo/err" "$tmp/gloo"/logs/*.err)"
    [ "$(cat "$tmp/gloo"/logs/rank-*.out | tr '\n' ' ')" = "6.0 6.0 6.0 " ] ||
      fail "gloo's allreduce gave: $(cat "$tmp/gloo"/logs/rank-*.out)"
    expect_gone "$tmp/gloo"
    echo "torch.distributed (gloo): an allreduce across 3 hosts"
  fi
  ;;

mpirun)
  # Open MPI's mpirun across the hosts: each rank says its host's name.
  run_wulf "$tmp/mpi" testbed run --platform "$platform" --np 3 --launcher mpirun --logs "$tmp/mpi/logs" --quiet \
    -- hostname
  [ "$code" -eq 0 ] || fail "mpirun hostname: wulf exited $code: $(cat "$tmp/mpi/err" "$tmp/mpi/logs/mpirun.err")"
  [ "$(sort "$tmp/mpi/logs/mpirun.out" | tr '\n' ' ')" = "batcave-0 batcave-1 batcave-2 " ] ||
    fail "mpirun's ranks said: $(cat "$tmp/mpi/logs/mpirun.out")"
  python3 - "$tmp/mpi/logs/run.json" <<'EOF' || fail "the record of an mpirun"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["config"]["launcher"] == "mpirun" and r["config"]["master_port"] is None, r["config"]
assert r["mpirun"]["exit_code"] == 0 and r["mpirun"]["stdout"].endswith("/mpirun.out"), r["mpirun"]
assert [x["host"] for x in r["ranks"]] == ["batcave-0", "batcave-1", "batcave-2"], r["ranks"]
EOF
  expect_gone "$tmp/mpi"
  # A failing MPI program: mpirun's code, named.
  run_wulf "$tmp/mpifail" testbed run --platform "$platform" --np 2 --launcher mpirun --logs "$tmp/mpifail/logs" \
    --quiet -- sh -c 'echo "no luck" >&2; exit 5'
  [ "$code" -eq 1 ] || fail "a failing MPI program: wulf exited $code: $(cat "$tmp/mpifail/err")"
  grep -q "mpirun exited with code" "$tmp/mpifail/err" || fail "the failure names no mpirun: $(cat "$tmp/mpifail/err")"
  expect_gone "$tmp/mpifail"
  echo "mpirun: the platform's hosts, and a failure named"
  ;;

failures)
  # 1. Rank 1 fails at once while the others sleep: they are ended within seconds.
  started=$(date +%s)
  run_wulf "$tmp/fail" testbed run --platform "$platform" --np 4 --logs "$tmp/fail/logs" --quiet \
    -- sh -c 'if [ "$RANK" = 1 ]; then echo "rank one gives up" >&2; exit 3; fi; exec sleep 600'
  took=$(($(date +%s) - started))
  [ "$code" -eq 1 ] || fail "a failing rank: wulf exited $code: $(cat "$tmp/fail/err")"
  [ "$took" -le 15 ] || fail "a failing rank: the others were ended after $took s"
  for word in "rank 1 (host batcave-1) exited with code 3" "rank one gives up"; do
    grep -qF "$word" "$tmp/fail/err" || fail "the failure does not say '$word': $(cat "$tmp/fail/err")"
  done
  python3 - "$tmp/fail/logs/run.json" <<'EOF' || fail "the record of a failing rank"
import json, sys
r = json.load(open(sys.argv[1]))
ranks = r["ranks"]
assert ranks[1]["exit_code"] == 3 and ranks[1]["ended_by"] is None, ranks[1]
for x in ranks[:1] + ranks[2:]:
    assert x["ended_by"] == "SIGTERM from wulf after rank 1 failed" and x["signal"] == "SIGTERM", x
assert "ended" not in r, r["ended"]
EOF
  expect_gone "$tmp/fail"
  echo "a failing rank: exit 1 after $took s, the others ended"

  # 2. SIGTERM to wulf while every rank runs: exit 143, a record that says so, nothing left.
  mkdir -p "$tmp/term/marks"
  start_wulf "$tmp/term" testbed run --platform "$platform" --np 4 --logs "$tmp/term/logs" --quiet \
    -- sh -c 'touch "$0/started-$RANK"; exec sleep 600' "$tmp/term/marks"
  wait_files "$tmp/term/marks" 4
  kill -TERM "$wulf"
  wait_ended
  [ "$code" -eq 143 ] || fail "SIGTERM: wulf exited $code: $(cat "$tmp/term/err")"
  grep -q "rank 0's process group" "$tmp/term/err" || fail "SIGTERM: the message names no rank: $(cat "$tmp/term/err")"
  python3 - "$tmp/term/logs/run.json" <<'EOF' || fail "the record of an interrupted run"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ended"]["status"] == "interrupted" and "SIGTERM" in r["ended"]["message"], r["ended"]
for x in r["ranks"]:
    assert x["ended_by"] == "SIGTERM from wulf on SIGTERM" and x["exit_code"] == 143, x
EOF
  expect_gone "$tmp/term"
  echo "SIGTERM: exit 143, nothing left"

  # 3. --timeout: exit 4, the record says so.
  run_wulf "$tmp/late" testbed run --platform "$platform" --np 2 --timeout 2 --logs "$tmp/late/logs" --quiet \
    -- sleep 600
  [ "$code" -eq 4 ] || fail "--timeout: wulf exited $code: $(cat "$tmp/late/err")"
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["ended"]["status"] == "timed_out", r' \
    "$tmp/late/logs/run.json" || fail "the record of a run past its time"
  expect_gone "$tmp/late"

  # 4. SIGKILL of wulf: its ranks die with it and its guardian removes the namespaces.
  mkdir -p "$tmp/kill/marks"
  start_wulf "$tmp/kill" testbed run --platform "$platform" --np 4 --logs "$tmp/kill/logs" --quiet \
    -- sh -c 'touch "$0/started-$RANK"; exec sleep 600' "$tmp/kill/marks"
  wait_files "$tmp/kill/marks" 4
  killed=$wulf
  [ -n "$(namespaces_of "$killed")" ] || fail "SIGKILL: the run has no namespaces"
  kill -KILL "$killed"
  wait "$killed" 2>/dev/null
  for _ in $(seq 100); do [ -z "$(namespaces_of "$killed")" ] && break; sleep 0.1; done
  [ -z "$(namespaces_of "$killed")" ] || fail "SIGKILL: namespaces left 10 s after: $(namespaces_of "$killed")"
  for _ in $(seq 50); do [ -z "$(session_processes "$killed")" ] && break; sleep 0.1; done
  left=$(session_processes "$killed")
  [ -z "$left" ] || fail "SIGKILL: processes of the killed run are left: $left"
  echo "SIGKILL: the guardian removed the namespaces, no rank is left"
  ;;

inputs)
  mkdir -p "$tmp/full"
  touch "$tmp/full/something"
  n=0
  # refused OPTION_NAMED ARGS...: `wulf testbed run ARGS` exits 2 naming it, and leaves nothing.
  refused() {
    local named=$1
    shift
    n=$((n + 1))
    run_wulf "$tmp/in$n" testbed run "$@"
    [ "$code" -eq 2 ] || fail "'$*' exited $code, not 2: $(cat "$tmp/in$n/err")"
    grep -qF -- "$named" "$tmp/in$n/err" || fail "'$*' does not name $named: $(cat "$tmp/in$n/err")"
    expect_gone "$tmp/in$n"
  }
  refused "no program" --platform "$platform" --np 2
  refused "no program" --platform "$platform" --np 2 --
  refused "--np" --platform "$platform" --np 0 -- true
  refused "--np 9: the platform" --platform "$platform" --np 9 -- true
  refused "--np" --platform "$platform" -- true
  refused "--hosts" --platform "$platform" --np 2 --hosts batcave-0,nosuch -- true
  refused "--hosts" --platform "$platform" --np 3 --hosts batcave-0,batcave-1 -- true
  refused "--platform" --platform "$tmp/none.xml" --np 2 -- true
  refused "--platform" --np 2 -- true
  refused "--master-port" --platform "$platform" --np 2 --master-port 70000 -- true
  refused "--master-port" --platform "$platform" --np 2 --master-port 0 -- true
  refused "--master-port is for --launcher env" --platform "$platform" --np 2 --launcher mpirun \
    --master-port 1234 -- true
  refused "--logs" --platform "$platform" --np 2 --logs "$tmp/full" -- true
  refused "--logs" --platform "$platform" --np 2 --logs /proc/none/logs -- true
  refused "--bw-scale" --platform "$platform" --np 2 --bw-scale 0 -- true
  refused "--launcher" --platform "$platform" --np 2 --launcher srun -- true
  refused "-- /no/such/program: not an executable file" --platform "$platform" --np 2 -- /no/such/program
  refused "-- no-such-program-here: no such program on PATH" --platform "$platform" --np 2 -- no-such-program-here
  [ "$(ls -A "$tmp/full")" = something ] || fail "--logs of a folder not empty: it changed: $(ls -A "$tmp/full")"
  echo "bad input: $n refusals, each exit 2 naming the option, nothing built or left"
  ;;

*)
  fail "no part '$part' (env, mpirun, failures, inputs)"
  ;;
esac

echo "PASSED"
