#!/usr/bin/env bash
# --engine testbed, the timings: real Open MPI over an emulated Bat Cave (namespaces, a
# switch, tc tbf) at p = 2 and 4 with one size, and redbcast at p = 4, against the simulation
# of the same platform; `wulf validate --testbed --platform` on a fat tree; a link's latency
# held on the testbed. Run alone (RUN_SERIAL): a loaded machine moves the times. A run's
# record and what a signal leaves are testbed_lifecycle_test.sh's, which runs beside others.
# Skipped (exit 77) with the reason where this machine cannot build the testbed.
#   testbed_test.sh BUILD_DIR PLATFORM
set -u
source "$(dirname "$0")/run_checks.sh"
setup_test "$1" "$2"

require_testbed

# 1. The allreduce of 4 096 doubles (recursive doubling) at p = 2 and 4 on the testbed is
# within 35% of the simulation of the same platform. The tolerance is for an uncalibrated
# platform (TCP/IP headers, the software path's own latency, a loaded machine); the 5%
# targets are experiments/testbed's, after calibration. A testbed shaped at the wrong rate
# (the dilation not applied to the links or to the clock) is 10 times off.
for engine in sim testbed; do
  "$build/wulf" platform bench "$platform" --engine "$engine" --np 2,4 --collectives allreduce \
    --elements 4096 --allreduce rdb --repeat 3 --no-pingpong --out "$tmp/$engine.json" \
    >"$tmp/$engine.out" 2>&1 || fail "platform bench --engine $engine: $(cat "$tmp/$engine.out")"
done
python3 - "$tmp/sim.json" "$tmp/testbed.json" <<'EOF' || fail "the testbed's allreduce is off"
import json, sys
sim, bed = (json.load(open(f)) for f in sys.argv[1:3])
assert bed["config"]["engine"] == "testbed" and bed["config"]["testbed"]["dilation"] >= 1, bed["config"]
times = lambda r: {row["np"]: row["time_s"] for row in r["collectives"]}
s, t = times(sim), times(bed)
assert sorted(s) == sorted(t) == [2, 4], (s, t)
for p in s:
    ratio = t[p] / s[p]
    print(f"allreduce 4096 doubles, p = {p}: sim {s[p]*1e3:.3f} ms, testbed {t[p]*1e3:.3f} ms, ratio {ratio:.3f}")
    assert 1 / 1.35 <= ratio <= 1.35, f"p = {p}: ratio {ratio:.3f}"
EOF

# 1b. redbcast of 54 912 doubles at p = 4: the same reduce and broadcast on both engines (Open
# MPI's choice for 439 296 bytes, a linear reduce and a linear broadcast: forced on mpirun and
# composed under smpirun), within 15% (a message of 439 KB is bound by the links, not by a
# loaded machine: 1.044 alone). Before 47ad797, SMPI's own redbcast ran its default reduce and
# a binomial broadcast: 207.7 ms simulated against 260.0 ms on the testbed (1.252); now 249.1.
# (8 hosts would show more; that version failed on a loaded machine, Open MPI's daemons not
# starting: a link's forwarder was ended with the command that started it, fixed in 395f4fc.)
for engine in sim testbed; do
  "$build/wulf" platform bench "$platform" --engine "$engine" --np 4 --collectives allreduce \
    --elements 54912 --allreduce redbcast --repeat 3 --no-pingpong --out "$tmp/rb-$engine.json" \
    >"$tmp/rb-$engine.out" 2>&1 || fail "platform bench redbcast --engine $engine: $(cat "$tmp/rb-$engine.out")"
done
python3 - "$tmp/rb-sim.json" "$tmp/rb-testbed.json" <<'EOF' || fail "the testbed's redbcast is off"
import json, sys
sim, bed = (json.load(open(f))["collectives"][0] for f in sys.argv[1:3])
assert (sim["reduce"], sim["bcast"]) == (bed["reduce"], bed["bcast"]), (sim, bed)
ratio = bed["time_s"] / sim["time_s"]
print(f"redbcast 54912 doubles, p = 4 ({sim['reduce']} reduce, {sim['bcast']} bcast): sim {sim['time_s']*1e3:.3f} ms, "
      f"testbed {bed['time_s']*1e3:.3f} ms, ratio {ratio:.3f}")
assert 1 / 1.15 <= ratio <= 1.15, f"ratio {ratio:.3f}"
EOF

fattree="$(cd "$(dirname "$0")" && pwd)/platforms/fattree8.xml"
# 2. `wulf validate --testbed --platform` on the fat tree (three switches, its uplinks shaped):
# the grid of both collectives at p = 2, 4, 8 and a training run, simulation against testbed,
# each within 25% (measured here: within 9.1% with the default grid; a link left unshaped or
# shaped at the wrong rate moves the p = 8 cells, which cross the uplinks, by more). The grid's
# two smaller sizes (both bound by the 10 MB/s links): with the default three the validation
# took 69 s of the suite's serial time. Each cell's calls follow an untimed one, which opens
# Open MPI's connections.
"$build/wulf" validate --testbed --platform "$fattree" --elements 4096,16768 --out "$tmp/validate.json" \
  >"$tmp/validate.out" 2>&1 ||
  fail "validate --testbed --platform: $(cat "$tmp/validate.out")"
python3 - "$tmp/validate.json" <<'EOF2' || fail "validate --testbed --platform on the fat tree is off"
import json, sys
r = json.load(open(sys.argv[1]))
grid = r["grid"]
assert len(grid) == 12 and {c["size"] for c in grid} == {4096, 16768}, grid
assert r["config"]["grid"]["repeat"] == 3 and r["config"]["grid"]["doubles"] == "4096,16768", r["config"]["grid"]
assert {c["collective"] for c in grid} == {"allreduce", "reduce"}, grid
for c in grid:
    assert c["algorithm"] == c["testbed_algorithm"], c
    assert abs(c["simulation_vs_testbed_pct"]) <= 25, c
t = r["training"]
assert abs(t["simulation_vs_testbed_pct"]) <= 25, t
assert r["config"]["testbed"]["network"]["most_shaped_hops"] == 4, r["config"]["testbed"]["network"]
worst = max(abs(c["simulation_vs_testbed_pct"]) for c in grid)
print(f"validate --platform fattree8: worst cell {worst:.1f}%, training {t['simulation_vs_testbed_pct']:.1f}%")
EOF2
# 3. Latency (issue 32, item 5): far2's hosts are 1 ms apart (500 us a link). The testbed
# holds each frame for its link's latency times D (a forwarder between the link's ends), so a
# 4-byte ping-pong takes the simulated one-way 1.00 ms plus the software path's own tens of
# microseconds (measured here, the least of 5: 1.011, 1.028 and 1.033 against 1.002 ms on
# three days); without the latency it took those few microseconds alone, with one link's
# latency it would take half. The least of 5 round trips is held to 10%: on CI's machine
# (this test runs alone, but on shared cores) a forwarder or a rank not scheduled in time put
# the mean of 3 at 1.098 ms. The mean is held to 50%: one round trip held up by a
# millisecond moves it by 20%.
far2="$(dirname "$0")/platforms/far2.xml"
for engine in sim testbed; do
  "$build/wulf" platform bench "$far2" --engine "$engine" --np 2 --sizes 4 --collectives allreduce --elements 16 \
    --repeat 5 --out "$tmp/far-$engine.json" >"$tmp/far.out" 2>&1 || fail "platform bench far2 --engine $engine: $(cat "$tmp/far.out")"
done
python3 - "$tmp/far-sim.json" "$tmp/far-testbed.json" <<'EOF2' || fail "the testbed's latency is off"
import json, sys
sim, bed = (json.load(open(f)) for f in sys.argv[1:3])
s, b = sim["pingpong"][0]["time_s"], bed["pingpong"][0]["time_s"]
least = min(bed["pingpong"][0]["calls_s"])
assert len(bed["pingpong"][0]["calls_s"]) == 5, bed["pingpong"][0]
assert 0.95 <= least / s <= 1.10, f"4 bytes one way: testbed {least * 1e3:.4g} ms at least, simulation {s * 1e3:.4g} ms"
assert 0.95 <= b / s <= 1.5, f"4 bytes one way: testbed {b * 1e3:.4g} ms on the mean, simulation {s * 1e3:.4g} ms"
assert bed["config"]["testbed"]["latency"]["largest_route_s"] == 1e-3, bed["config"]["testbed"]["latency"]
print(f"ping-pong of 4 bytes on far2: testbed {least * 1e3:.4g} ms at least, {b * 1e3:.4g} ms on the mean, simulation {s * 1e3:.4g} ms")
EOF2
echo "PASSED"
