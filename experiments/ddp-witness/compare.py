#!/usr/bin/python3
"""Puts real DDP's iterations on the testbed beside wulf's prediction of the same cells.

    compare.py RESULTS_DIR [--warmup W] [--out DIR]

RESULTS_DIR is run.sh's results folder: records/tb-*.json (ddp_bench.py's, one per repeat of a
cell) and records/sim-*.json (wulf train's). A cell's measured time is the median over its
repeats of each repeat's p50 (the slowest rank's iteration, 20 timed after the warm-up), its
spread the largest minus the smallest repeat's p50 over that median; wulf's is the mean of its
`train_s` (the blocks of an iteration, without the test pass ddp_bench.py does not run) over
the iterations after the warm-up, simulated at the machine's speed when the cell ran (run.sh's
speed probes). A one-process cell's DDP overhead is measured in one process beside a copy of
the net without DDP (ddp_bench.py --paired). Writes OUT/results.txt (the table), OUT/results.json (every
figure) and OUT/ddp-witness.png.

Targets (issue 61, item 5): wulf within 5% of the measured p50 in every cell; a one-process DDP
run's overhead over no DDP within 1 point of the measured one; the bucket caps in the same order
of speed as measured. A cell whose spread is above 5% is marked: its target is not claimed; so
is a cell run once, whose spread is not known, and a cell whose ranks were more than the
machine's cores (its testbed run's record, logs/CELL/run.json: `wulf testbed run` notes it),
whose compute was not that of the platform's hosts.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def measured(res):
    """cell -> its repeats' records (ddp_bench.py's), each with `cores`: the machine's cores its
    testbed run counted (None where its run.json is missing)."""
    cells = {}
    for path in sorted(glob.glob(os.path.join(res, "records", "tb-*.json"))):
        name = os.path.basename(path)[:-5]
        m = re.fullmatch(r"tb-(.*)-r(\d+)", name)
        if not m:
            continue
        record = load(path)
        run = os.path.join(res, "logs", name, "run.json")
        record["cores"] = (load(run).get("machine") or {}).get("cores") if os.path.exists(run) else None
        cells.setdefault(m.group(1), []).append(record)
    return cells


def predicted(res, warmup):
    cells = {}
    for path in sorted(glob.glob(os.path.join(res, "records", "sim-*.json"))):
        r = load(path)
        h = [e for e in r["history"] if e.get("iteration", 0) > warmup and "train_s" in e]
        if not h:
            continue
        cells[os.path.basename(path)[4:-5]] = {
            "iteration_s": statistics.fmean(e["train_s"] for e in h),
            "exposed_s": statistics.fmean(e.get("exposed_comm_s", 0) for e in h),
            "ddp_s": statistics.fmean(e.get("ddp_fixed_s", 0) + e.get("ddp_copy_s", 0) + e.get("ddp_steal_s", 0)
                                      for e in h),
            "buckets": h[-1].get("buckets"),
        }
    return cells


def describe(cell):
    m = re.fullmatch(r"(solo|[a-z0-9-]+?)(?:-p(\d+))?-(noddp|cap(\d+)-view(on|off))", cell)
    if not m:
        return None
    return {"network": None if m.group(1) == "solo" else m.group(1), "p": int(m.group(2) or 1),
            "cap_mb": int(m.group(4)) if m.group(4) else None, "view": m.group(5), "ddp": m.group(3) != "noddp"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("results")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    meas = measured(a.results)
    pred = predicted(a.results, a.warmup)
    rows = []
    for cell in sorted(set(meas) | set(pred), key=lambda c: ((describe(c) or {}).get("p", 0), c)):
        d = describe(cell)
        if d is None:
            continue
        p50s = [r["p50_s"] for r in meas.get(cell, [])]
        row = dict(d, cell=cell, repeats=len(p50s), p50s_s=p50s)
        if p50s:
            med = statistics.median(p50s)
            row.update(measured_s=med, p90_s=statistics.median(r["p90_s"] for r in meas[cell]),
                       rebuilt_bytes=meas[cell][0].get("buckets", {}) and meas[cell][0]["buckets"].get("rebuilt_bytes"))
            if len(p50s) > 1:  # one run has no spread to state
                row["spread"] = (max(p50s) - min(p50s)) / med
            cores = [r["cores"] for r in meas[cell] if r.get("cores")]
            if cores and d["p"] > min(cores):
                row["shared_cores"] = min(cores)
        if cell in pred:
            row.update(predicted_s=pred[cell]["iteration_s"], exposed_s=pred[cell]["exposed_s"],
                       ddp_charged_s=pred[cell]["ddp_s"], buckets=pred[cell]["buckets"])
        if "measured_s" in row and "predicted_s" in row:
            row["diff"] = row["predicted_s"] / row["measured_s"] - 1
        rows.append(row)

    # One process: DDP's overhead over the same loop without it. Measured in one process, a copy
    # of the net without DDP trained beside it, an iteration of each in turn (ddp_bench.py
    # --paired: the machine's drift cancels); predicted against wulf's run without DDP.
    solo = {r["cell"]: r for r in rows if r["network"] is None}
    base = solo.get("solo-noddp", {})
    for r in rows:
        if r["network"] is None and r["ddp"]:
            paired = [m["paired"]["overhead"] for m in meas.get(r["cell"], []) if m.get("paired")]
            if paired:
                r["overhead_measured"] = statistics.median(paired)
                if len(paired) > 1:
                    r["overhead_spread"] = max(paired) - min(paired)
            if "predicted_s" in r and "predicted_s" in base:
                r["overhead_predicted"] = r["predicted_s"] / base["predicted_s"] - 1
    # The caps' order of speed, per network, p and view: measured against predicted.
    orders = []
    for key in sorted({(r["network"], r["p"], r["view"]) for r in rows if r["ddp"]}, key=str):
        group = [r for r in rows if (r["network"], r["p"], r["view"]) == key and "measured_s" in r
                 and "predicted_s" in r]
        if len(group) < 2:
            continue
        by_measured = [r["cap_mb"] for r in sorted(group, key=lambda r: r["measured_s"])]
        by_predicted = [r["cap_mb"] for r in sorted(group, key=lambda r: r["predicted_s"])]
        # Caps whose measured times differ by less than the larger spread are a tie: either order holds.
        ties = []
        for i, x in enumerate(group):
            for y in group[i + 1:]:
                gap = abs(x["measured_s"] - y["measured_s"]) / min(x["measured_s"], y["measured_s"])
                if gap < max(x.get("spread", 0), y.get("spread", 0)):
                    ties.append(sorted([x["cap_mb"], y["cap_mb"]]))
        orders.append({"network": key[0], "p": key[1], "view": key[2], "measured": by_measured,
                       "predicted": by_predicted, "ties_within_spread": ties,
                       "same": by_measured == by_predicted})

    lines = ["Real PyTorch DDP (gloo, 1 compute thread a rank) on the testbed against wulf's prediction",
             "(--strategy overlap --framework ddp, simulated); seconds an iteration, measured: the median over",
             "the repeats of each repeat's p50; spread: (max - min) / median of the repeats' p50",
             "network       p  cap MiB view |  measured  spread  reps |  predicted    diff | exposed  ddp chg  bkts"]
    for r in rows:
        m = r.get("measured_s")
        flag = ("" if "measured_s" not in r
                else "  (%d ranks on %d cores: not claimed)" % (r["p"], r["shared_cores"]) if "shared_cores" in r
                else "  (one run: its spread is not known)" if "spread" not in r
                else "" if r["spread"] <= 0.05 else "  (spread > 5%: not claimed)")
        lines.append("%-12s %2d %8s %4s | %9s %6s %5s | %10s %7s | %7s %8s %5s%s" % (
            r["network"] or "one proc", r["p"], "-" if r["cap_mb"] is None else r["cap_mb"], r["view"] or "-",
            "%.4f" % m if m else "-", "%.1f%%" % (100 * r["spread"]) if "spread" in r else "-", r["repeats"],
            "%.4f" % r["predicted_s"] if "predicted_s" in r else "-",
            "%+.1f%%" % (100 * r["diff"]) if "diff" in r else "-",
            "%.3f" % r["exposed_s"] if "exposed_s" in r else "-",
            "%.4f" % r["ddp_charged_s"] if "ddp_charged_s" in r else "-",
            r.get("buckets") if r.get("buckets") is not None else "-", flag))
    compared = [r for r in rows if "diff" in r and r["network"] is not None]
    claimed = [r for r in compared if "spread" in r and r["spread"] <= 0.05 and "shared_cores" not in r]
    within = [r for r in claimed if abs(r["diff"]) <= 0.05]
    lines.append("within 5%%: %d of %d cells claimed (run more than once, a spread of at most 5%%, a core a rank); "
                 "%d cells in all, %d within 5%% of all"
                 % (len(within), len(claimed), len(compared), len([r for r in compared if abs(r["diff"]) <= 0.05])))
    for r in rows:
        if "overhead_measured" in r and "overhead_predicted" in r:
            lines.append("one process, cap %s view %s: DDP over no DDP measured %+.2f%% (%s), "
                         "predicted %+.2f%% (%+.2f points)"
                         % (r["cap_mb"], r["view"], 100 * r["overhead_measured"],
                            "spread %.2f points" % (100 * r["overhead_spread"]) if "overhead_spread" in r else "one run",
                            100 * r["overhead_predicted"], 100 * (r["overhead_predicted"] - r["overhead_measured"])))
    for o in orders:
        lines.append("order of caps, %s p %d view %s: measured %s, predicted %s%s%s" % (
            o["network"] or "one proc", o["p"], o["view"], o["measured"], o["predicted"],
            "" if o["same"] else "  (differs)", "; within the spread: %s" % o["ties_within_spread"]
            if o["ties_within_spread"] else ""))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"cells": rows, "orders": orders}, f, indent=1)
        f.write("\n")
    plot(rows, os.path.join(a.out, "ddp-witness.png"))


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("compare.py: no matplotlib (Debian python3-matplotlib): no plot", file=sys.stderr)
        return
    both = [r for r in rows if "measured_s" in r and "predicted_s" in r]
    if not both:
        return
    fig, ax = plt.subplots(figsize=(6, 6))
    marks = {None: "s", "batcave-bare": "o", "batcave-bare-x2": "^"}
    for r in both:
        colour = {1: "tab:gray", 2: "tab:blue", 4: "tab:red"}.get(r["p"], "k")
        spread = r.get("spread", 0) * r["measured_s"] / 2
        ax.errorbar(r["measured_s"], r["predicted_s"], xerr=spread, fmt=marks.get(r["network"], "x"), color=colour,
                    mfc="none" if r["view"] == "on" else colour)
    lo = min(min(r["measured_s"], r["predicted_s"]) for r in both) * 0.9
    hi = max(max(r["measured_s"], r["predicted_s"]) for r in both) * 1.1
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
    ax.fill_between([lo, hi], [lo * 0.95, hi * 0.95], [lo * 1.05, hi * 1.05], color="0.9")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("real DDP on the testbed, p50 s an iteration")
    ax.set_ylabel("wulf --framework ddp, simulated s an iteration")
    ax.set_title("ddp-witness: circles Bat Cave's rates, triangles twice them,\nsquares one process; "
                 "grey p=1, blue p=2, red p=4; open: bucket views", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
