"""Reads the toy study's records; writes results.csv and speedup.png; prints the table. An
engine with no records (ENGINES=sim run.sh) keeps its rows of results.csv, if there is one.

Iteration time = the run's time (wall under mpirun, simulated under smpirun) over its
iterations, the test evaluation included; speedup(p, b) = time(1, b) / time(p, b).
"""
import csv
import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

records, csv_path, png_path = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
rows = []
for f in sorted(records.glob("*.json")):
    r = json.loads(f.read_text())
    c = r["config"]
    iters = r["final"]["iterations"]
    rows.append({"engine": c["engine"], "p": c["np"], "b": c["block"], "iterations": iters,
                 "iteration_s": r["final"]["time_s"] / iters})
base = {(r["engine"], r["b"]): r["iteration_s"] for r in rows if r["p"] == 1}
for r in rows:
    r["speedup"] = base[(r["engine"], r["b"])] / r["iteration_s"]
measured = {r["engine"] for r in rows}
if pathlib.Path(csv_path).exists():
    with open(csv_path, newline="") as f:
        rows += [{k: (v if k == "engine" else float(v) if "." in v else int(v)) for k, v in r.items()}
                 for r in csv.DictReader(f) if r["engine"] not in measured]
rows.sort(key=lambda r: (r["engine"], r["p"], r["b"]))
with open(csv_path, "w", newline="") as out:
    w = csv.DictWriter(out, fieldnames=["engine", "p", "b", "iterations", "iteration_s", "speedup"])
    w.writeheader()
    w.writerows(rows)

print(f"{'engine':6} {'p':>2} {'b':>4} {'iteration (ms)':>15} {'speedup':>8}")
for r in rows:
    print(f"{r['engine']:6} {r['p']:>2} {r['b']:>4} {1e3 * r['iteration_s']:>15.4f} {r['speedup']:>8.2f}")

TITLES = {"real": "mpirun on this machine (2 cores)", "sim": "smpirun on toy4 (100 Mbit/s, 1 Gflop/s)"}
engines = [e for e in TITLES if any(r["engine"] == e for r in rows)]  # ENGINES=sim runs only one
fig, axes = plt.subplots(1, len(engines), figsize=(5 * len(engines), 4), sharey=False, squeeze=False)
for ax, engine in zip(axes[0], engines):
    title = TITLES[engine]
    for p in (2, 4):
        pts = sorted((r["b"], r["speedup"]) for r in rows if r["engine"] == engine and r["p"] == p)
        ax.plot([b for b, _ in pts], [s for _, s in pts], marker="o", label=f"{p} ranks")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("block size b")
    ax.set_ylabel("speedup of one iteration")
    ax.set_title(title, fontsize=10)
    ax.legend()
fig.suptitle("encoder 256-8-256, training-set parallelism")
fig.tight_layout()
fig.savefig(png_path, dpi=100)
