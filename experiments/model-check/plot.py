#!/usr/bin/python3
"""Model against simulation (issue 65 item 2): each cell of check.py's record a point, the
simulated time per iteration across, the model's up, the band of 5% drawn; overlap's cells by
allreduce, fsdp's apart.

    /usr/bin/python3 experiments/model-check/plot.py [results/check.json [results/check.png]]
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    record = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results", "check.json")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.splitext(record)[0] + ".png"
    grid = json.load(open(record))["cells"]
    cells = [c for c in grid if "sim_s" in c]
    groups = {}
    for c in cells:
        words = c["variant"].split()
        key = words[0] + " " + (words[1] if words[0] == "overlap" else "")
        groups.setdefault(key.strip(), []).append(c)
    fig, ax = plt.subplots(figsize=(7, 6))
    markers = "osD^v<>p*h"
    for i, (key, group) in enumerate(sorted(groups.items())):
        ax.scatter([c["sim_s"] for c in group], [c["model_s"] for c in group], label=key, marker=markers[i % 10],
                   s=18, alpha=0.8)
    lo = min(min(c["sim_s"], c["model_s"]) for c in cells) / 1.5
    hi = max(max(c["sim_s"], c["model_s"]) for c in cells) * 1.5
    ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8)
    ax.fill_between([lo, hi], [lo * 0.95, hi * 0.95], [lo * 1.05, hi * 1.05], color="grey", alpha=0.2, label="within 5%")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("simulated time per iteration (s)")
    ax.set_ylabel("modelled time per iteration (s)")
    within = sum(abs(c["difference"]) <= 0.05 for c in cells)
    ax.set_title("wulf model against wulf's simulation: %d of %d cells compared within 5%%\n(%d of the grid's %d "
                 "not compared: see table.md)" % (within, len(cells), len(grid) - len(cells), len(grid)), fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
