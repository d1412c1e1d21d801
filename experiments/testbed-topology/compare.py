#!/usr/bin/env python3
"""The tables of experiments/testbed-topology (run.sh): the simulation against the testbed on
the fat tree, on Bunyip reduced and on every platform's grid. Prints them, writes
OUT/results.txt, OUT/results.json and OUT/topology.png.

    compare.py RECORDS OUT
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PLATFORMS = ["messner", "bunyip-reduced", "ppt-p4", "dt42", "sorgan"]


def load(rec, name):
    with open(os.path.join(rec, name)) as f:
        return json.load(f)


def rows(record):
    return {(r["np"], r["size"]): r["time_s"] for r in record["collectives"]}


def err(sim, bed):
    return 100.0 * (sim - bed) / bed


def fattree(rec, lines, out):
    lines.append("1. Fat tree of 8 hosts, uplinks 4 to 1 oversubscribed (tests/platforms/fattree8.xml), allreduce:")
    lines.append(f"{'p':>3}{'doubles':>9}{'algorithm':>11}{'simulation':>13}{'testbed':>12}{'sim/bed':>10}")
    t = {}
    for alg in ["rdb", "ring"]:
        s = rows(load(rec, f"fattree-sim-{alg}.json"))
        b = rows(load(rec, f"fattree-testbed-{alg}.json"))
        for key in sorted(s):
            t[(alg,) + key] = (s[key], b[key])
            lines.append(f"{key[0]:>3}{key[1]:>9}{alg:>11}{s[key]*1e3:>10.2f} ms{b[key]*1e3:>9.2f} ms"
                         f"{err(s[key], b[key]):>9.1f}%")
            out["cells"].append({"platform": "fattree8", "what": "allreduce " + alg, "np": key[0],
                                 "size": key[1], "simulation_s": s[key], "testbed_s": b[key]})
    for size in sorted({k[2] for k in t}):
        rs = t[("rdb", 8, size)][0] / t[("ring", 8, size)][0]
        rb = t[("rdb", 8, size)][1] / t[("ring", 8, size)][1]
        lines.append(f"uplink contention at p = 8, {size} doubles: recursive doubling takes {rs:.2f} x the ring's "
                     f"time simulated, {rb:.2f} x on the testbed ({err(rs, rb):+.1f}%)")
        out["contention"].append({"size": size, "simulation_rdb_over_ring": rs, "testbed_rdb_over_ring": rb})
    lines.append("")


def bunyip(rec, lines, out):
    lines.append("2. Bunyip reduced (platforms/bunyip-reduced.xml, 17 ranks), reduce of 262 144 floats:")
    lines.append(f"{'protocol':<34}{'reduce':>14}{'simulation':>13}{'testbed':>12}{'sim/bed':>10}")
    names = {65536: "rendezvous past 64 KiB", 4194304: "eager up to 4 MiB"}
    for eager in [65536, 4194304]:
        t = {}
        for reduce in ["binomial", "wulf-binomial", "four-stage"]:
            s = load(rec, f"bunyip-sim-{reduce}-{eager}.json")["collectives"][0]["time_s"]
            b = load(rec, f"bunyip-testbed-{reduce}-{eager}.json")["collectives"][0]["time_s"]
            t[reduce] = (s, b)
            lines.append(f"{names[eager]:<34}{reduce:>14}{s*1e3:>10.1f} ms{b*1e3:>9.1f} ms{err(s, b):>9.1f}%")
            out["cells"].append({"platform": "bunyip-reduced", "what": f"reduce {reduce}, {names[eager]}", "np": 17,
                                 "size": 262144, "simulation_s": s, "testbed_s": b})
        # The four-stage reduce's saving against the library's reduce (seed 002's comparison)
        # and against wulf's binomial (the same tree from the same point-to-point calls).
        for against in ["binomial", "wulf-binomial"]:
            ss = t[against][0] - t["four-stage"][0]
            sb = t[against][1] - t["four-stage"][1]
            lines.append(f"{'saving against ' + against:>48}{ss*1e3:>10.1f} ms{sb*1e3:>9.1f} ms"
                         + (f"{err(ss, sb):>9.1f}%" if abs(sb) > 5e-3 else "         -"))
            out["four_stage_saving"].append({"protocol": names[eager], "against": against, "simulation_s": ss,
                                             "testbed_s": sb})
    lines.append("")


def platforms(rec, lines, out):
    lines.append("3. Every platform, `wulf validate --testbed --platform P` (p = 2, 4, 8; 4 096, 16 768, 54 912 doubles):")
    lines.append(f"{'platform':<16}{'allreduce within 5%':>21}{'worst':>8}{'reduce within 5%':>18}{'worst':>8}"
                 f"{'training sim/bed':>18}{'without latency: within 5%':>28}{'10%':>9}")
    for p in PLATFORMS:
        path = os.path.join(rec, f"validate-{p}.json")
        if not os.path.exists(path):
            continue
        r = load(rec, f"validate-{p}.json")
        cols = []
        for what in ["allreduce", "reduce"]:
            cells = [c for c in r["grid"] if c["collective"] == what]
            within = sum(abs(c["simulation_vs_testbed_pct"]) <= 5 for c in cells)
            worst = max(abs(c["simulation_vs_testbed_pct"]) for c in cells)
            cols.append(f"{within:>3} of {len(cells):<3}")
            cols.append(worst)
            for c in cells:
                out["cells"].append({"platform": p, "what": what + " " + c["algorithm"], "np": c["np"],
                                     "size": c["size"], "simulation_s": c["simulation_s"],
                                     "testbed_s": c["testbed_s"],
                                     "simulation_without_latency_s": c["simulation_without_latency_s"]})
        tr = r["training"]["simulation_vs_testbed_pct"]
        flat = [abs(c["simulation_without_latency_vs_testbed_pct"]) for c in r["grid"]]
        w5, w10 = sum(e <= 5 for e in flat), sum(e <= 10 for e in flat)
        lines.append(f"{p:<16}{cols[0]:>21}{cols[1]:>7.1f}%{cols[2]:>18}{cols[3]:>7.1f}%{tr:>17.1f}%"
                     f"{w5:>18} of {len(flat):<7}{w10:>3} of {len(flat)}")
        out["platforms"].append({"platform": p, "training": r["training"], "dilation": r["config"]["testbed"]["dilation"]})
    lines.append("")


def figure(out, path):
    fig, ax = plt.subplots(figsize=(6.5, 6))
    by = {}
    for c in out["cells"]:
        by.setdefault(c["platform"], []).append(c)
    for name, cells in by.items():
        dots = ax.scatter([c["testbed_s"] * 1e3 for c in cells], [c["simulation_s"] * 1e3 for c in cells], s=18,
                          label=name)
        flat = [c for c in cells if "simulation_without_latency_s" in c]
        if flat:  # the same cells simulated without the links' latency, which the testbed lacks
            ax.scatter([c["testbed_s"] * 1e3 for c in flat], [c["simulation_without_latency_s"] * 1e3 for c in flat],
                       s=18, facecolors="none", edgecolors=dots.get_facecolor()[0])
    lo = min(c["testbed_s"] for c in out["cells"]) * 1e3 / 1.5
    hi = max(c["testbed_s"] for c in out["cells"]) * 1e3 * 1.5
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
    for f in [0.9, 1.1]:
        ax.plot([lo, hi], [lo * f, hi * f], "k:", lw=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("testbed (real Open MPI over the emulated network), ms")
    ax.set_ylabel("simulation (SMPI), ms")
    ax.set_title("Every collective cell, simulation against testbed\n(hollow: simulated without latency, which the "
                 "testbed lacks;\nsolid line: equal; dotted: 10% off)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    rec, dest = sys.argv[1], sys.argv[2]
    out = {"cells": [], "contention": [], "four_stage_saving": [], "platforms": []}
    lines = []
    fattree(rec, lines, out)
    bunyip(rec, lines, out)
    platforms(rec, lines, out)
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(dest, "results.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(dest, "results.json"), "w") as f:
        json.dump(out, f, indent=1)
    figure(out, os.path.join(dest, "topology.png"))


if __name__ == "__main__":
    main()
