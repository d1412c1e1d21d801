#!/usr/bin/python3
"""Time to the target error, real (mpirun) against simulated (smpirun on this machine's
calibrated platform), from the records of run.sh."""
import json
import os
import sys

here = sys.argv[1]
rec = os.path.join(here, "records")


def load(name):
    with open(os.path.join(rec, name + ".json")) as f:
        return json.load(f)


print("digits:20x20 (400-25-10, float, no biases), b = 256, 60 000 patterns, target: test error <= 5%")
print("%3s %-6s %10s %14s %16s %12s" % ("p", "engine", "iterations", "time to target", "per iteration", "test error"))
times = {}
for p in (1, 2):
    curves = {}
    for engine in ("real", "sim"):
        r = load("%s-p%d" % (engine, p))
        h = r["history"]
        fin = r["final"]
        reached = fin["status"] == "target_reached"
        it, t = h[-1]["iteration"], h[-1]["time_s"]
        times[(p, engine)] = t if reached else None
        curves[engine] = [e.get("test_error") for e in h]
        print("%3d %-6s %10d %13.3fs %15.2fms %11.2f%%%s" % (p, engine, it, t, 1e3 * t / it, 100 * h[-1]["test_error"],
                                                          "" if reached else "  (target NOT reached)"))
    same = len(curves["real"]) == len(curves["sim"]) and all(
        abs(a - b) <= 1e-12 for a, b in zip(curves["real"], curves["sim"]))
    print("    the two engines' test errors, iteration by iteration: %s" % ("identical" if same else "DIFFERENT"))
print()
for p in (1, 2):
    real, sim = times[(p, "real")], times[(p, "sim")]
    if real and sim:
        print("p = %d: simulated time to target %+.1f%% of the measured one" % (p, 100 * (sim / real - 1)))
if all(times.values()):
    print("speed-up to target, p = 2 over p = 1: measured %.2f, simulated %.2f"
          % (times[(1, "real")] / times[(2, "real")], times[(1, "sim")] / times[(2, "sim")]))
wall = os.path.join(rec, "wall_s.txt")
load = os.path.join(rec, "load-before.txt")
if os.path.exists(load):
    print("load before the run:" + open(load).read().split("load average:")[-1].rstrip())
if os.path.exists(wall):
    print("wall time of run.sh: %s s" % open(wall).read().strip())
