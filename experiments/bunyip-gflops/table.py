#!/usr/bin/python3
"""Seed 002 section 7 from the records of run.sh: Fig. 8 (fig8.png, fig8.csv) and the
sustained rate on 196 CPUs with its price/performance, beside the paper's numbers."""
import json
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = sys.argv[1]
rec = os.path.join(here, "records")
PAPER_GFLOPS, PAPER_COST_USD, PAPER_CENTS = 163.3, 150913, 92.4
LINES = [("small", "400-80-200, 40 960 patterns"), ("jocr", "JOCR 400-480-3203, 163 480 patterns"),
         ("jocr-scaled", "JOCR, 32 000 patterns per processor")]


def load(name):
    with open(os.path.join(rec, name + ".json")) as f:
        return json.load(f)


def procs(line):
    ps = [int(n[len(line) + 1:-5]) for n in os.listdir(rec)
          if n.startswith(line + "-") and n[len(line) + 1:-5].isdigit()]
    return sorted(ps)


print("Fig. 8: GFlop/s (the forward and backward flops performed, over simulated time) against processors,")
print("batch CG on bunyip-p2p.xml, four-stage reduce, 1 090 MFlop/s per CPU; 6w: seed 002's convention")
header = "%6s" % "p" + "".join("%14s %6s %8s" % (line, "eff", "6w") for line, _ in LINES)
print(header)
rows = {}
for line, _ in LINES:
    for p in procs(line):
        perf = load("%s-%d" % (line, p))["performance"]
        rows.setdefault(p, {})[line] = perf
with open(os.path.join(here, "fig8.csv"), "w") as csv:
    csv.write("p," + ",".join("%s_gflops,%s_efficiency,%s_gflops_6w" % (line, line, line) for line, _ in LINES) + "\n")
    for p in sorted(rows):
        cells, fields = "", []
        for line, _ in LINES:
            perf = rows[p].get(line)
            if perf is None:
                cells += "%14s %6s %8s" % ("-", "-", "-")
                fields += ["", "", ""]
                continue
            eff = perf["mflops_per_rank"] / 1090.0  # of the CPU's charged rate
            cells += "%14.2f %5.0f%% %8.2f" % (perf["gflops"], 100 * eff, perf["gflops_6w"])
            fields += ["%.6g" % perf["gflops"], "%.4f" % eff, "%.6g" % perf["gflops_6w"]]
        print("%6d" % p + cells)
        csv.write("%d," % p + ",".join(fields) + "\n")

print()
print("Section 7.3: 9 360 000 patterns on 196 CPUs (the paper's record run)")
print("%-44s %10s %12s %14s %11s %14s" % ("", "GFlop/s", "MFlop/s/CPU", "cents/MFlop/s", "GFlop/s 6w",
                                           "cents 6w"))
print("%-44s %10.1f %12.0f %14.1f %11s %14s" % ("paper (measured, four hours; its own count)", PAPER_GFLOPS,
                                                PAPER_GFLOPS * 1e3 / 196, PAPER_CENTS, "", ""))
for name, what in [("sustained-four-stage", "wulf, four-stage reduce, 1 090 MFlop/s CPUs"),
                   ("sustained-library", "wulf, library (binomial) reduce"),
                   ("sustained-940", "wulf, four-stage, CPUs at 940 MFlop/s")]:
    perf = load(name)["performance"]
    print("%-44s %10.1f %12.0f %14.1f %11.1f %14.1f" % (what, perf["gflops"], perf["mflops_per_rank"],
                                                       perf["cents_per_mflops"], perf["gflops_6w"],
                                                       100 * PAPER_COST_USD / (perf["gflops_6w"] * 1e3)))
four, lib = load("sustained-four-stage")["performance"], load("sustained-library")["performance"]
print("four-stage over library reduce: %+.2f%% (the paper: 'roughly 1%%')" % (100 * (four["gflops"] / lib["gflops"] - 1)))
rec4 = load("sustained-four-stage")
reduces = rec4["final"]["strategy"]["gradient_passes"] + rec4["final"]["strategy"]["line_search_probes"]
print("  with the paper's own reduce times instead (8.5 s and 4.9 s, 3.6 s saved per reduce): %d reduces "
      "in %.0f s, %+.2f%%" % (reduces, rec4["final"]["time_s"], 100 * reduces * 3.6 / rec4["final"]["time_s"]))
print("the paper's price check: %d USD / %.1f GFlop/s = %.1f cents per MFlop/s"
      % (PAPER_COST_USD, PAPER_GFLOPS, 100 * PAPER_COST_USD / (PAPER_GFLOPS * 1e3)))
print("CPU rate that would give 163.3 GFlop/s at this run's efficiency: %.0f MFlop/s"
      % (1090 * PAPER_GFLOPS / four["gflops"]))
wall = os.path.join(here, "wall_s.txt")
if os.path.exists(wall):
    print("wall time of run.sh: %s s" % open(wall).read().strip())

fig, ax = plt.subplots(figsize=(6.4, 4.6))
for (line, label), marker in zip(LINES, "sox"):
    ps = [p for p in sorted(rows) if line in rows[p]]
    ax.plot(ps, [rows[p][line]["gflops"] for p in ps], marker=marker, label=label)
ax.plot([1, 196], [1.09, 196 * 1.09], ":", color="grey", label="p x 1.09 GFlop/s (the charged CPU rate)")
ax.plot([196], [PAPER_GFLOPS], "k*", markersize=11, label="paper: 163.3 GFlop/s sustained (sec. 7.3)")
ax.set_xlabel("processors")
ax.set_ylabel("GFlop/s (forward + backward flops performed / simulated time)")
ax.set_title("Seed 002 Fig. 8, simulated on bunyip-p2p.xml (batch CG)")
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(os.path.join(here, "fig8.png"), dpi=120)
