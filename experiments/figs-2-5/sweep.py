"""Seed 000's Figs. 2-5: speedup and efficiency against block size for p = 2..32, for the
function, encoder and digits examples on Bat Cave and Messner: the model's curves
(`wulf model`) and the simulation's points (`wulf train --engine sim --compute calibrated
--numerics off`, one iteration each, on the platform grown to 32 hosts).

  /usr/bin/python3 experiments/figs-2-5/sweep.py [build dir]

Writes records/, results.csv and one PNG per (problem, cluster), beside this script or into
$OUT; prints progress and the wall time of the whole sweep. results.csv says for every point
whether the model's assumptions hold there (b divides the n training patterns, p divides b).
"""
import concurrent.futures
import csv
import json
import os
import pathlib
import subprocess
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = pathlib.Path(__file__).resolve().parent
build = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else here.parent.parent / "build"
wulf = str(build / "wulf")
platforms = here.parent.parent / "platforms"
out = pathlib.Path(os.environ.get("OUT", here))
records = out / "records"
records.mkdir(parents=True, exist_ok=True)

PROCS = [2, 4, 8, 16, 32]
BLOCKS = {  # 10 block sizes each, up to learning by epoch where the set is small
    "function": [32, 48, 64, 96, 128, 192, 256, 384, 512, 1024],
    "encoder": [32, 40, 48, 64, 80, 96, 128, 160, 192, 256],
    "digits": [32, 64, 128, 256, 500, 1000, 2000, 4000, 8000, 15000],
}
CLUSTERS = ["batcave", "messner"]


def sim(problem, cluster, p, b):
    record = records / f"sim-{problem}-{cluster}-p{p}-b{b}.json"
    if not record.exists():
        cmd = [wulf, "train", "--problem", problem, "--bias", "off", "--precision", "double", "--block", str(b),
               "--epochs", "1", "--engine", "sim", "--np", str(p), "--platform", str(platforms / f"{cluster}.xml"),
               "--grow", "32", "--compute", "calibrated", "--profile", f"{cluster}-{problem}", "--numerics", "off",
               "--allreduce", "rdb", "--quiet", "--out", str(record)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    r = json.loads(record.read_text())
    return r["history"][1]["time_s"], r["config"]["train_patterns"]


def model(problem, cluster):
    record = records / f"model-{problem}-{cluster}.json"
    blocks = ",".join(str(b) for b in BLOCKS[problem])
    subprocess.run([wulf, "model", "--profile", f"{cluster}-{problem}", "--np", ",".join(map(str, PROCS)),
                    "--block", blocks, "--out", str(record)], check=True, stdout=subprocess.DEVNULL)
    return {(int(e["p"]), int(e["b"])): e for e in json.loads(record.read_text())["grid"]}


start = time.time()
jobs = [(pr, cl, p, b) for pr in BLOCKS for cl in CLUSTERS for b in BLOCKS[pr] for p in [1] + PROCS]
times, patterns = {}, {}
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    futures = {pool.submit(sim, *j): j for j in jobs}
    for k, f in enumerate(concurrent.futures.as_completed(futures), 1):
        times[futures[f]], patterns[futures[f][0]] = f.result()
        print(f"\r  simulated {k}/{len(jobs)} runs, {time.time() - start:5.1f} s", end="", flush=True)
print()

rows = []
for pr in BLOCKS:
    for cl in CLUSTERS:
        m = model(pr, cl)
        fig, (ax_s, ax_e) = plt.subplots(1, 2, figsize=(11, 4.2))
        for p in PROCS:
            bs = BLOCKS[pr]
            ms = [m[(p, b)]["speedup"] for b in bs]
            ss = [times[(pr, cl, 1, b)] / times[(pr, cl, p, b)] for b in bs]
            line, = ax_s.plot(bs, ms, label=f"{p} processors, model")
            ax_s.plot(bs, ss, "o", color=line.get_color(), markersize=4, label=f"{p}, simulated")
            ax_e.plot(bs, [s / p for s in ms], color=line.get_color())
            ax_e.plot(bs, [s / p for s in ss], "o", color=line.get_color(), markersize=4)
            for b, mv, sv in zip(bs, ms, ss):
                rows.append({"problem": pr, "cluster": cl, "p": p, "b": b, "model_speedup": mv, "sim_speedup": sv,
                             "difference": sv / mv - 1, "n": patterns[pr],
                             "assumptions_hold": patterns[pr] % b == 0 and b % p == 0})
        for ax, label in ((ax_s, "speedup"), (ax_e, "efficiency")):
            ax.set_xscale("log")
            ax.set_xlabel("block size b")
            ax.set_ylabel(label)
        ax_s.axhline(1.0, color="grey", linewidth=0.8)
        ax_s.legend(fontsize=7, ncol=2)
        fig.suptitle(f"{pr} on {cl} (lines: seed 000's model; points: wulf's simulation)")
        fig.tight_layout()
        fig.savefig(out / f"{pr}-{cl}.png", dpi=90)
        plt.close(fig)

with open(out / "results.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
worst = max(rows, key=lambda r: abs(r["difference"]))
print(f"{len(rows)} points; largest simulation-model difference {100 * worst['difference']:+.1f}% "
      f"({worst['problem']} on {worst['cluster']}, p {worst['p']}, b {worst['b']})")
print(f"the sweep took {time.time() - start:.1f} s")
