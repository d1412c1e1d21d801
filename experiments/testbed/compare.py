#!/usr/bin/python3
"""The testbed against the simulation, from the records of run.sh.

  compare.py calibrate RECORDS      prints "BW_SCALE LAT_SCALE" (and writes calibration.json):
                                    the testbed's ping-pong (median of its runs) over the
                                    simulated one, as a user calibrates against a real cluster
  compare.py report RECORDS FOLDER  prints the tables, writes FOLDER/results.json and
                                    FOLDER/testbed.png
"""
import json
import os
import statistics
import sys

TESTBED_RUNS = ("bench-testbed-1", "bench-testbed-2", "bench-testbed-3")
PROCS = (2, 4, 8)
ELEMENTS = (4096, 16768, 54912)
BLOCKS = (16, 32, 64, 128)
# Seed 000, Table VII (as core/cli/study.cpp holds it): p = 2, 4, 8 by b = 16, 32, 64, 128.
PAPER_VII = {2: (0.57, 0.87, 1.20, 1.48), 4: (0.36, 0.64, 1.09, 1.67), 8: (0.26, 0.48, 0.88, 1.54)}


def load(rec, name):
    with open(os.path.join(rec, name + ".json")) as f:
        return json.load(f)


def exists(rec, name):
    return os.path.exists(os.path.join(rec, name + ".json"))


def pingpong(record):
    """{bytes: one-way time} of a bench record."""
    return {row["bytes"]: row["time_s"] for row in record["pingpong"]}


def latency_bandwidth(times):
    """As wulf platform bench sums it up: the smallest message's time, and the largest's bytes
    over its time beyond that latency."""
    small, large = min(times), max(times)
    return times[small], large / (times[large] - times[small])


def median_pingpong(rec):
    runs = [pingpong(load(rec, n)) for n in TESTBED_RUNS if exists(rec, n)]
    return {size: statistics.median(r[size] for r in runs) for size in runs[0]}


def calibrate(rec):
    bed_lat, bed_bw = latency_bandwidth(median_pingpong(rec))
    sim_lat, sim_bw = latency_bandwidth(pingpong(load(rec, "bench-sim")))
    cal = {"testbed_latency_s": bed_lat, "testbed_bandwidth_Bps": bed_bw, "sim_latency_s": sim_lat,
           "sim_bandwidth_Bps": sim_bw, "bw_scale": bed_bw / sim_bw, "lat_scale": bed_lat / sim_lat}
    with open(os.path.join(rec, "calibration.json"), "w") as f:
        json.dump(cal, f, indent=1)
    print("%.6g %.6g" % (cal["bw_scale"], cal["lat_scale"]))


def collective_times(record):
    """{(p, elements): time} of a bench record's allreduces."""
    return {(row["np"], row["size"]): row["time_s"] for row in record["collectives"] if row["what"] == "allreduce"}


def pct(a, b):
    return 100.0 * (a / b - 1)


def allreduce_table(rec, results):
    runs = [collective_times(load(rec, n)) for n in TESTBED_RUNS if exists(rec, n)]
    sim = collective_times(load(rec, "bench-sim"))
    cal = collective_times(load(rec, "bench-sim-calibrated"))
    d20 = collective_times(load(rec, "bench-testbed-d20")) if exists(rec, "bench-testbed-d20") else {}
    c = json.load(open(os.path.join(rec, "calibration.json")))
    print("1. Allreduce (recursive doubling: SMPI rdb / Open MPI coll_tuned 3), Bat Cave, D = 10, mean of %d calls"
          % load(rec, TESTBED_RUNS[0])["config"]["repeat"])
    print("   ping-pong: testbed latency %.2f us, bandwidth %.2f Mbit/s; simulation %.2f us, %.2f Mbit/s"
          % (1e6 * c["testbed_latency_s"], 8e-6 * c["testbed_bandwidth_Bps"], 1e6 * c["sim_latency_s"],
             8e-6 * c["sim_bandwidth_Bps"]))
    print("   calibrated simulation: --bw-scale %.4f --lat-scale %.4f" % (c["bw_scale"], c["lat_scale"]))
    print("%3s %8s %10s %12s %10s %14s %10s %10s %10s" % ("p", "doubles", "sim ms", "calib. ms", "testbed ms",
                                                    "runs' spread", "vs sim", "vs calib.", "D=20 vs c."))
    rows = []
    for p in PROCS:
        for n in ELEMENTS:
            each = [r[(p, n)] for r in runs]
            bed = statistics.median(each)
            spread = 100.0 * (max(each) - min(each)) / bed
            row = {"p": p, "elements": n, "sim_s": sim[(p, n)], "calibrated_sim_s": cal[(p, n)], "testbed_s": bed,
                   "testbed_runs_s": each, "spread_pct": spread, "error_vs_sim_pct": pct(bed, sim[(p, n)]),
                   "error_vs_calibrated_pct": pct(bed, cal[(p, n)]), "within_5pct": abs(pct(bed, cal[(p, n)])) <= 5}
            extra = ""
            if (p, n) in d20:
                row["testbed_d20_s"] = d20[(p, n)]
                row["d20_error_vs_calibrated_pct"] = pct(d20[(p, n)], cal[(p, n)])
                extra = "%+9.1f%%" % row["d20_error_vs_calibrated_pct"]
            print("%3d %8d %10.2f %12.2f %10.2f %13.1f%% %+9.1f%% %+9.1f%% %10s" % (
                p, n, 1e3 * sim[(p, n)], 1e3 * cal[(p, n)], 1e3 * bed, spread, row["error_vs_sim_pct"],
                row["error_vs_calibrated_pct"], extra))
            rows.append(row)
    met = sum(r["within_5pct"] for r in rows)
    print("   within 5%% of the calibrated simulation: %d of %d cells" % (met, len(rows)))
    results["calibration"] = c
    results["allreduce"] = rows
    return rows


def iteration_time(rec, name):
    return load(rec, name)["history"][1]["time_s"]


def table_vii(rec, results):
    print()
    print("2. Table VII: speedup of one iteration (function example, numerics off, calibrated compute), Bat Cave")
    print("   sim: SMPI's rendezvous (no data before the receive is posted); sim eager: --eager-limit 4194304,")
    print("   the testbed's protocol; the testbed's p = 8, b = 16 and 32 ran three times (each run given)")
    print("%3s %5s %7s %8s %10s %10s %11s %13s" % ("p", "b", "paper", "sim", "sim eager", "testbed", "bed vs sim",
                                                 "bed vs eager"))
    rows = []
    for p in PROCS:
        for j, b in enumerate(BLOCKS):
            s = iteration_time(rec, "t7-sim-p1-b%d" % b) / iteration_time(rec, "t7-sim-p%d-b%d" % (p, b))
            e = iteration_time(rec, "t7-sim-eager-p1-b%d" % b) / iteration_time(rec, "t7-sim-eager-p%d-b%d" % (p, b))
            seq = iteration_time(rec, "t7-testbed-p1-b%d" % b)
            runs = ["t7-testbed-p%d-b%d" % (p, b)] + [n for n in ("t7-testbed-p%d-b%d-run%d" % (p, b, k) for k in (2, 3))
                                                     if exists(rec, n)]
            t_runs = [seq / iteration_time(rec, n) for n in runs]
            t = t_runs[0]
            row = {"p": p, "b": b, "paper": PAPER_VII[p][j], "sim": s, "sim_eager": e, "testbed": t,
                   "testbed_runs": t_runs, "error_pct": pct(t, s), "error_vs_eager_pct": pct(t, e),
                   "within_10pct": abs(pct(t, s)) <= 10,
                   "runs_within_10pct": sum(abs(pct(x, s)) <= 10 for x in t_runs),
                   "sim_iteration_s": iteration_time(rec, "t7-sim-p%d-b%d" % (p, b)),
                   "testbed_iteration_s": iteration_time(rec, "t7-testbed-p%d-b%d" % (p, b))}
            more = "" if len(t_runs) == 1 else "   runs: " + ", ".join("%.3f (%+.0f%%)" % (x, pct(x, s)) for x in t_runs)
            print("%3d %5d %7.2f %8.3f %10.3f %10.3f %+10.1f%% %+12.1f%%%s" % (p, b, row["paper"], s, e, t,
                                                                            row["error_pct"], row["error_vs_eager_pct"],
                                                                            more))
            rows.append(row)
    seq = [{"b": b, "sim_s": iteration_time(rec, "t7-sim-p1-b%d" % b),
            "testbed_s": iteration_time(rec, "t7-testbed-p1-b%d" % b)} for b in BLOCKS]
    print("   p = 1 (the reference), s per iteration: " + ", ".join(
        "b %d: sim %.4f, bed %.4f (%+.1f%%)" % (q["b"], q["sim_s"], q["testbed_s"], pct(q["testbed_s"], q["sim_s"]))
        for q in seq))
    print("   within 10%% of the simulation: %d of %d cells (first runs); runs within 10%%: %d of %d" % (
        sum(r["within_10pct"] for r in rows), len(rows), sum(r["runs_within_10pct"] for r in rows),
        sum(len(r["testbed_runs"]) for r in rows)))
    results["table_vii"] = {"cells": rows, "sequential": seq}
    return rows


def curve(record):
    return [(h["iteration"], h["time_s"], h.get("test_error")) for h in record["history"]]


def training(rec, results):
    print()
    sim, bed = load(rec, "train-sim"), load(rec, "train-testbed")
    cs, cb = curve(sim), curve(bed)
    same = len(cs) == len(cb) and all(a[0] == b[0] and a[2] == b[2] for a, b in zip(cs, cb))
    ts, tb = cs[-1][1], cb[-1][1]
    print("3. Training to a test rmse of 0.19: function example, b = 128, eta 3, p = 4, calibrated compute, Bat Cave")
    for name, r, c in (("sim", sim, cs), ("testbed", bed, cb)):
        print("   %-8s %s after %d iterations, %.3f s, test rmse %.6g" % (
            name, r["final"]["status"], c[-1][0], c[-1][1], c[-1][2]))
    print("   error curves iteration by iteration: %s" % ("identical" if same else "DIFFERENT"))
    print("   time to target: testbed %+.1f%% of the simulation" % pct(tb, ts))
    results["training"] = {"same_curve": same, "iterations": [cs[-1][0], cb[-1][0]], "sim_s": ts, "testbed_s": tb,
                           "error_pct": pct(tb, ts), "within_5pct": abs(pct(tb, ts)) <= 5,
                           "sim_status": sim["final"]["status"], "testbed_status": bed["final"]["status"]}
    return cs, cb


def back_to_back(rec, results):
    """The allreduces made back to back (no barrier between calls): three testbed runs against
    the simulation with SMPI's rendezvous and with the testbed's eager limit."""
    runs = [n for n in ("b2b-testbed-1", "b2b-testbed-2", "b2b-testbed-3") if exists(rec, n)]
    if not runs:
        return
    print()
    print("4. Allreduce calls back to back, as training makes them (no barrier between calls), ms per call")
    print("%3s %9s %10s %10s   %s" % ("p", "doubles", "sim", "sim eager", "testbed runs (vs sim)"))
    sim, eager = collective_times(load(rec, "b2b-sim")), collective_times(load(rec, "b2b-sim-eager"))
    beds = [collective_times(load(rec, n)) for n in runs]
    rows = []
    for key in sorted(sim):
        times = [bed[key] for bed in beds]
        row = {"p": key[0], "elements": key[1], "sim_s": sim[key], "sim_eager_s": eager[key], "testbed_runs_s": times,
               "errors_pct": [pct(t, sim[key]) for t in times]}
        print("%3d %9d %10.2f %10.2f   %s" % (key[0], key[1], 1e3 * sim[key], 1e3 * eager[key], ", ".join(
            "%.2f (%+.0f%%)" % (1e3 * t, pct(t, sim[key])) for t in times)))
        rows.append(row)
    results["back_to_back"] = rows


def states(rec, results):
    """Rank 0's time in each of 64 back-to-back calls (step states): whether a run stayed in
    step (every call of its last 20 under 60 ms) or fell into the cycle, and where."""
    names = sorted(f[:-5] for f in os.listdir(rec) if f.startswith("states-") and f.endswith(".json"))
    if not names:
        return
    print()
    print("6. Back-to-back allreduces of 16 768 doubles at p = 8, call by call (rank 0), ms")
    print("%-28s %8s %8s %8s %8s  %s" % ("run", "per call", "last 20", "min", "max", "first call over 60 ms"))
    rows = []
    for name in names:
        row = collective_row(load(rec, name))
        calls = [1e3 * t for t in row["calls_s"]]
        tail = calls[-20:]
        first = next((i for i, t in enumerate(calls) if t > 60), None)
        rows.append({"run": name, "time_s": row["time_s"], "calls_s": row["calls_s"], "first_slow_call": first,
                     "in_step": first is None})
        print("%-28s %8.2f %8.2f %8.1f %8.1f  %s" % (name, 1e3 * row["time_s"], sum(tail) / len(tail), min(tail),
                                                    max(tail), "-" if first is None else first))
    results["states"] = rows


def protocol(rec, results):
    """Step protocol: each engine at one eager limit, the testbed's (4 MiB) and Open MPI's own
    (64 KiB), beside the simulation as it is (SMPI's rendezvous)."""
    if not exists(rec, "protocol-vii-sim"):
        return
    limits = (65536, 4194304)
    grids = {"sim": collective_times(load(rec, "protocol-grid-sim"))}
    for limit in limits:
        grids["sim %d" % limit] = collective_times(load(rec, "protocol-grid-sim-%d" % limit))
        grids["bed %d" % limit] = collective_times(load(rec, "protocol-grid-testbed-%d" % limit))
    print()
    print("7. One protocol on both engines: the allreduce with defaults (Open MPI 4.1's choice), ms, and the")
    print("   testbed against the simulation given its eager limit, and against SMPI's rendezvous")
    print("%3s %8s %8s %10s %10s %10s %10s %13s %13s %13s" % (
        "p", "doubles", "sim", "sim 64K", "bed 64K", "sim 4M", "bed 4M", "bed64K/sim64K", "bed4M/sim4M", "bed4M/sim"))
    rows = []
    for key in sorted(grids["sim"]):
        t = {name: 1e3 * g[key] for name, g in grids.items()}
        row = {"np": key[0], "elements": key[1], "ms": t,
               "bed_64k_vs_sim_64k_pct": pct(t["bed 65536"], t["sim 65536"]),
               "bed_4m_vs_sim_4m_pct": pct(t["bed 4194304"], t["sim 4194304"]),
               "bed_4m_vs_sim_pct": pct(t["bed 4194304"], t["sim"])}
        rows.append(row)
        print("%3d %8d %8.2f %10.2f %10.2f %10.2f %10.2f %+12.1f%% %+12.1f%% %+12.1f%%" % (
            key[0], key[1], t["sim"], t["sim 65536"], t["bed 65536"], t["sim 4194304"], t["bed 4194304"],
            row["bed_64k_vs_sim_64k_pct"], row["bed_4m_vs_sim_4m_pct"], row["bed_4m_vs_sim_pct"]))
    sim = iteration_time(rec, "protocol-vii-sim")
    print("   Table VII's iteration at p = 8, b = 16, rdb, s (simulation as it is: %.3f s)" % sim)
    vii = {"sim": sim}
    for limit in limits:
        s_lim = iteration_time(rec, "protocol-vii-sim-%d" % limit)
        beds = [iteration_time(rec, "protocol-vii-testbed-%d-%d" % (limit, k)) for k in (1, 2, 3)
                if exists(rec, "protocol-vii-testbed-%d-%d" % (limit, k))]
        vii[str(limit)] = {"sim": s_lim, "testbed_runs": beds}
        print("   eager limit %7d: sim %.3f s; testbed runs %s (vs the sim given it: %s; vs SMPI's rendezvous: %s)" % (
            limit, s_lim, ", ".join("%.3f" % b for b in beds), ", ".join("%+.1f%%" % pct(b, s_lim) for b in beds),
            ", ".join("%+.1f%%" % pct(b, sim) for b in beds)))
    results["protocol"] = {"grid": rows, "table_vii_p8_b16": vii}


def collective_row(record):
    return record["collectives"][0]


def plot(rows, t7, cs, cb, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(16, 4.8))
    x = range(len(rows))
    for k in range(3):
        ax1.plot(list(x), [pct(r["testbed_runs_s"][k], r["calibrated_sim_s"]) for r in rows], "x", color="grey",
                 label="testbed, each run" if k == 0 else None)
    ax1.plot(list(x), [r["error_vs_calibrated_pct"] for r in rows], "o", color="C2", label="testbed, median of 3")
    ax1.plot(list(x), [pct(r["sim_s"], r["calibrated_sim_s"]) for r in rows], "s", mfc="none", color="C0",
             label="simulation as the platform is")
    ax1.axhspan(-5, 5, color="C2", alpha=0.1, label="target: within 5%")
    ax1.axhline(0, color="black", lw=0.6)
    ax1.set_xticks(list(x))
    ax1.set_xticklabels(["p%d\n%d" % (r["p"], r["elements"]) for r in rows], fontsize=8)
    ax1.set_ylabel("% against the calibrated simulation")
    ax1.set_title("Allreduce of doubles (recursive doubling), Bat Cave, D = 10")
    ax1.legend(fontsize=7)
    for k, p in enumerate(PROCS):
        cells = [r for r in t7 if r["p"] == p]
        ax2.plot(BLOCKS, [r["sim"] for r in cells], "o-", color="C%d" % k, label="p = %d, simulation" % p)
        ax2.plot(BLOCKS, [r["testbed"] for r in cells], "x--", color="C%d" % k, label="p = %d, testbed" % p)
        ax2.plot(BLOCKS, [r["sim_eager"] for r in cells], "s", mfc="none", color="C%d" % k,
                 label="p = %d, simulation, eager to 4 MiB" % p)
        for r in cells:
            ax2.plot([r["b"]] * len(r["testbed_runs"]), r["testbed_runs"], "+", color="C%d" % k)
        ax2.plot(BLOCKS, [r["paper"] for r in cells], ":", color="C%d" % k, alpha=0.6,
                 label="p = %d, paper" % p)
    ax2.set_xscale("log", base=2)
    ax2.set_xticks(BLOCKS)
    ax2.set_xticklabels([str(b) for b in BLOCKS])
    ax2.set_xlabel("block b")
    ax2.set_ylabel("speedup of one iteration")
    ax2.set_title("Table VII: function example on Bat Cave")
    ax2.legend(fontsize=7, ncol=1)
    ax3.plot([c[1] for c in cs], [c[2] for c in cs], "o-", label="simulation")
    ax3.plot([c[1] for c in cb], [c[2] for c in cb], "x--", label="testbed, D = 10")
    ax3.axhline(0.19, color="grey", lw=0.8, ls=":")
    ax3.set_xlabel("time (s of Bat Cave's time)")
    ax3.set_ylabel("test rmse")
    ax3.set_title("function example, p = 4, b = 128: training to 0.19")
    ax3.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def report(rec, folder):
    results = {"platform": "platforms/batcave.xml", "dilation": 10,
               "algorithm": "allreduce recursive doubling: SMPI smpi/allreduce:rdb, Open MPI coll_tuned_allreduce_algorithm 3"}
    rows = allreduce_table(rec, results)
    t7 = table_vii(rec, results)
    cs, cb = training(rec, results)
    back_to_back(rec, results)
    states(rec, results)
    protocol(rec, results)
    wall = os.path.join(rec, "wall_s.txt")
    if os.path.exists(wall):
        steps = {}
        for line in open(wall):
            name, seconds = line.split()
            steps[name] = float(seconds)
        results["wall_s"] = steps
        print()
        print("wall time of run.sh by step (s): " + ", ".join("%s %.0f" % kv for kv in steps.items())
              + "; total %.0f" % sum(steps.values()))
    with open(os.path.join(folder, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    plot(rows, t7, cs, cb, os.path.join(folder, "testbed.png"))


if __name__ == "__main__":
    if sys.argv[1] == "calibrate":
        calibrate(sys.argv[2])
    else:
        report(sys.argv[2], sys.argv[3])
