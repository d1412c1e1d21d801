#!/usr/bin/python3
"""Prints seed 002's reduce times beside the simulated ones, writes them and Fig. 6's speed-ups
to results.json, and draws Fig. 6 (fig6.png).

    table.py FOLDER   (FOLDER/records in; results.json and fig6.png out)
"""
import json
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = sys.argv[1]
rec = os.path.join(here, "records")
PAPER = {"library": 8.5, "four-stage": 4.9, "stages": [0.18, 0.66, 0.9, 3.16]}


def bench(platform, reduce):
    with open(os.path.join(rec, "reduce-%s-%s.json" % (platform, reduce))) as f:
        return json.load(f)["collectives"][0]


print("Reduce of 1 729 440 floats over 194 processes (seed 002 section 5.2)")
print("%-16s %10s %10s %10s %10s %10s" % ("", "library", "four-stage", "stage 1", "stage 2", "stage 3") + " %10s" % "stage 4")
print("%-16s %9.2fs %9.2fs" % ("paper", PAPER["library"], PAPER["four-stage"])
      + "".join(" %9.2fs" % s for s in PAPER["stages"]))
results = {"reduce": {"paper": {"library": PAPER["library"], "four-stage": PAPER["four-stage"],
                                "stages": PAPER["stages"]}}, "fig6": []}
for platform in ("bunyip", "bunyip-p2p"):
    lib, four = bench(platform, "wulf-binomial"), bench(platform, "four-stage")
    ends = four["stages_s"]
    stages = [ends[0]] + [ends[i] - ends[i - 1] for i in range(1, 4)]
    results["reduce"][platform] = {"library": lib["time_s"], "four-stage": four["time_s"], "stages": stages}
    print("%-16s %9.2fs %9.2fs" % (platform + ".xml", lib["time_s"], four["time_s"])
          + "".join(" %9.2fs" % s for s in stages))

print("\nFig. 6: speed-up of one training iteration from the four-stage reduce")
sizes = [194000, 388000, 970000, 1940000, 4850000, 9264000]
plt.figure(figsize=(6.4, 4.2))
fig6 = {}
for platform in ("bunyip", "bunyip-p2p"):
    speedups = fig6[platform] = []
    for n in sizes:
        t = {}
        for reduce in ("wulf-binomial", "four-stage"):
            with open(os.path.join(rec, "fig6-%s-%s-%d.json" % (platform, reduce, n))) as f:
                t[reduce] = json.load(f)["final"]["time_s"]
        speedups.append(t["wulf-binomial"] / t["four-stage"])
        print("  %-11s %8d patterns: library %8.2f s, four-stage %8.2f s, speed-up %.3f"
              % (platform, n, t["wulf-binomial"], t["four-stage"], speedups[-1]))
    plt.plot(sizes, speedups, "o-", label="simulated, %s.xml (both reduces)" % platform)
# The paper's curve: its measured saving, 8.5 - 4.9 = 3.6 s per reduce, against the
# gradient's time on 194 CPUs; that time is the simulation's own compute (bunyip-p2p,
# four-stage) minus that run's reduce.
paper = []
for n in sizes:
    with open(os.path.join(rec, "fig6-bunyip-p2p-four-stage-%d.json" % n)) as f:
        r = json.load(f)
    q = r["phases"]["ranks"][0]
    compute = q["forward_s"] + q["backward_s"] + q["update_s"]
    paper.append((compute + PAPER["library"]) / (compute + PAPER["four-stage"]))
    print("  seed 002's reduce times with the simulated compute, %8d patterns: speed-up %.3f" % (n, paper[-1]))
plt.plot(sizes, paper, "k--", label="seed 002's reduce times (8.5 s, 4.9 s) with simulated compute")
plt.xscale("log")
plt.xlabel("training patterns (all ranks)")
plt.ylabel("speed-up of an iteration")
plt.title("Fig. 6: training speed-up from the four-stage reduce (194 CPUs)")
plt.legend(fontsize=8)
plt.grid(True, which="both", alpha=0.3)
plt.tight_layout()
plt.savefig(os.path.join(here, "fig6.png"), dpi=120)
results["fig6"] = [{"patterns": n, "bunyip": s, "bunyip-p2p": q, "paper": c}
                   for n, s, q, c in zip(sizes, fig6["bunyip"], fig6["bunyip-p2p"], paper)]
with open(os.path.join(here, "results.json"), "w") as f:
    json.dump(results, f, indent=1)
print("figure: %s" % os.path.join(here, "fig6.png"))
