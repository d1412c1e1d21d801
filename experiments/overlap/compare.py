#!/usr/bin/python3
"""Issue 33 item 4: the overlap grid, simulated against the testbed.

   compare.py RECORDS OUT

Reads RECORDS/<platform>-<engine>-p<p>-<variant>.json (run.sh), prints the table to stdout,
and writes OUT/results.txt, OUT/results.json and OUT/overlap.png. The time of an iteration
(one block) is the mean of epochs 2..k of each record's history (the first opens the
testbed's TCP connections); the saving is block's time less overlap's, over block's. Item 5: RECORDS/<platform>-model-p<p>.json
(`wulf model --overlap`) against the simulated cells, and the limits: RECORDS/limit-<name>-model.json
against RECORDS/<platform>-sim-p<p>-limit-<name>.json."""
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
TARGET_MODEL = 5.0     # percent, the model against the simulation, per iteration
LIMITS = [("messner-p6-rdb", "messner", 6, "recursive doubling, p = 6: ranks fold in and out"),
          ("messner-p6-ring", "messner", 6, "ring, p = 6"),
          ("bunyip-p16-ring", "bunyip", 16, "ring, one tensor, Bunyip tetrahedron, SMPI factors"),
          ("bunyip-p16-whole", "bunyip", 16, "ring, whole net, Bunyip tetrahedron, SMPI factors")]


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


def model_cells(path):
    """bucket bytes -> (overlap s, block s) of a `wulf model --overlap` record, or {}."""
    if not os.path.exists(path):
        return {}
    return {c["bucket_bytes"]: (c["time_s"], c["block_s"]) for c in json.load(open(path))["grid"]}


def model_section(rec, rows, say):
    """The model's time per iteration against the simulation's, every cell of the grid."""
    say("")
    say("Model (wulf model --overlap, the platform's constants) against the simulation, per iteration (s)")
    say("%-8s %2s %-11s | %8s %8s %7s" % ("platform", "p", "variant", "sim", "model", "diff"))
    for row in rows:
        cells = model_cells(os.path.join(rec, "%s-model-p%d.json" % (row["platform"], row["p"])))
        if not cells or "sim_s" not in row:
            continue
        if row["variant"] == "block":
            model = next(iter(cells.values()))[1]
        else:
            model = cells.get(int(row["variant"].split("-")[1]), (None,))[0]
        if model is None:
            continue
        row["model_s"] = model
        row["model_diff_pct"] = 100 * (model / row["sim_s"] - 1)
        row["model_met"] = abs(row["model_diff_pct"]) <= TARGET_MODEL
        say("%-8s %2d %-11s | %8.4f %8.4f %+6.1f%%" % (row["platform"], row["p"], row["label"], row["sim_s"], model,
                                                     row["model_diff_pct"]))
    modelled = [r for r in rows if "model_met" in r]
    worst = max((abs(r["model_diff_pct"]) for r in modelled), default=float("nan"))
    say("model within %g%% of the simulation: %d of %d cells (largest difference %.1f%%)" % (
        TARGET_MODEL, sum(r["model_met"] for r in modelled), len(modelled), worst))


def limits_section(rec, say):
    """The model where its assumptions hold and where they break."""
    say("")
    say("Where the model holds and where it breaks down (64 patterns per rank, one rank per host)")
    say("%-17s %-52s | %8s %8s %7s" % ("cell", "what", "sim", "model", "diff"))
    limits = []
    for name, platform, p, what in LIMITS:
        sim = load(rec, platform, "sim", p, "limit-" + name)
        cells = model_cells(os.path.join(rec, "limit-%s-model.json" % name))
        if not sim or not cells:
            continue
        model = next(iter(cells.values()))[0]
        diff = 100 * (model / sim["iteration_s"] - 1)
        limits.append({"cell": name, "what": what, "sim_s": sim["iteration_s"], "model_s": model, "diff_pct": diff})
        say("%-17s %-52s | %8.4f %8.4f %+6.1f%%" % (name, what, sim["iteration_s"], model, diff))
    return limits


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
    model_section(rec, rows, say)
    limits = limits_section(rec, say)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(out, "results.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"rows": rows, "limits": limits}, f, indent=1)

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
