#!/usr/bin/python3
"""Issue 33 item 4: the overlap grid, simulated against the testbed.

   compare.py RECORDS OUT

Reads RECORDS/<platform>-<engine>-p<p>-<variant>.json (run.sh), prints the table to stdout,
and writes OUT/results.txt, OUT/results.json and OUT/overlap.png. The time of an iteration
(one block) is the mean of epochs 2..k of each record's history (the first opens the
testbed's TCP connections); the saving is block's time less overlap's, over block's."""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PLATFORMS = ["batcave", "messner"]
PROCS = [2, 4, 8]
BUCKETS = [("overlap-0", "one tensor"), ("overlap-524288", "512 KiB"), ("overlap-67108864", "whole net")]
TARGET_TIME = 5.0      # percent, testbed against simulation, per iteration
TARGET_SAVING = 5.0    # percentage points, the saving over block


def load(rec, platform, engine, p, variant):
    path = os.path.join(rec, "%s-%s-p%d-%s.json" % (platform, engine, p, variant))
    if not os.path.exists(path):
        return None
    r = json.load(open(path))
    times = [h["time_s"] for h in r["history"]]
    if len(times) < 3:
        return None
    per_iteration = (times[-1] - times[1]) / (len(times) - 2)
    notes = r["history"][-1]  # the strategy's notes sit in each iteration's entry
    return {"iteration_s": per_iteration, "exposed_s": notes.get("exposed_comm_s"),
            "buckets": notes.get("buckets")}


def main():
    rec, out = sys.argv[1], sys.argv[2]
    rows, lines = [], []
    say = lines.append
    say("Overlapped bucketed ring allreduce against block's blocking ring: time per iteration (s),")
    say("digits 784-256x6-10 float, 64 patterns per rank, numerics off; testbed at dilation 10")
    say("%-8s %2s %-11s | %8s %8s %7s | %7s %7s %6s | %9s %9s" % (
        "platform", "p", "variant", "sim", "testbed", "diff", "save sim", "save tb", "pp", "exposed s", "buckets"))
    for platform in PLATFORMS:
        for p in PROCS:
            base = {e: load(rec, platform, e, p, "block") for e in ("sim", "testbed")}
            for variant, label in [("block", "block")] + BUCKETS:
                cell = {e: load(rec, platform, e, p, variant) for e in ("sim", "testbed")}
                row = {"platform": platform, "p": p, "variant": variant, "label": label}
                for e in ("sim", "testbed"):
                    if cell[e]:
                        row[e + "_s"] = cell[e]["iteration_s"]
                        row[e + "_exposed_s"] = cell[e]["exposed_s"]
                        row["buckets"] = cell[e]["buckets"]
                        if base[e] and variant != "block":
                            row[e + "_saving_pct"] = 100 * (1 - cell[e]["iteration_s"] / base[e]["iteration_s"])
                if "sim_s" in row and "testbed_s" in row:
                    row["diff_pct"] = 100 * (row["testbed_s"] / row["sim_s"] - 1)
                    row["time_met"] = abs(row["diff_pct"]) <= TARGET_TIME
                if "sim_saving_pct" in row and "testbed_saving_pct" in row:
                    row["saving_diff_pp"] = row["testbed_saving_pct"] - row["sim_saving_pct"]
                    row["saving_met"] = abs(row["saving_diff_pp"]) <= TARGET_SAVING
                rows.append(row)

                def f(key, fmt):
                    return fmt % row[key] if row.get(key) is not None else "-"
                say("%-8s %2d %-11s | %8s %8s %7s | %7s %7s %6s | %9s %9s" % (
                    platform, p, label, f("sim_s", "%.4f"), f("testbed_s", "%.4f"), f("diff_pct", "%+.1f%%"),
                    f("sim_saving_pct", "%.1f%%"), f("testbed_saving_pct", "%.1f%%"), f("saving_diff_pp", "%+.1f"),
                    f("sim_exposed_s", "%.4f"), f("buckets", "%g")))
    timed = [r for r in rows if "time_met" in r]
    saved = [r for r in rows if "saving_met" in r]
    say("within %g%% per iteration: %d of %d cells; saving within %g pp: %d of %d" % (
        TARGET_TIME, sum(r["time_met"] for r in timed), len(timed), TARGET_SAVING,
        sum(r["saving_met"] for r in saved), len(saved)))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(out, "results.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"rows": rows}, f, indent=1)

    fig, axes = plt.subplots(1, len(PLATFORMS), figsize=(11, 4.2), sharey=False)
    for ax, platform in zip(axes, PLATFORMS):
        for k, (variant, label) in enumerate([("block", "block")] + BUCKETS):
            for engine, style in (("sim", "-"), ("testbed", "--")):
                xs = [r["p"] for r in rows if r["platform"] == platform and r["variant"] == variant
                      and engine + "_s" in r]
                ys = [r[engine + "_s"] for r in rows if r["platform"] == platform and r["variant"] == variant
                      and engine + "_s" in r]
                if xs:
                    ax.plot(xs, ys, style, marker="o", color="C%d" % k, label="%s (%s)" % (label, engine))
        ax.set_title(platform)
        ax.set_xlabel("ranks p")
        ax.set_xticks(PROCS)
        ax.set_ylabel("seconds per iteration")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("Overlapped buckets against the blocking allreduce: simulation (solid), testbed (dashed)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "overlap.png"), dpi=110)


if __name__ == "__main__":
    main()
