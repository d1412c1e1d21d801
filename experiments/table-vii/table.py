"""Table VII: the paper's predicted speedups, wulf's model and wulf's simulation."""
import csv
import json
import pathlib
import sys

records, csv_path = pathlib.Path(sys.argv[1]), sys.argv[2]
PAPER = {2: [0.57, 0.87, 1.20, 1.48], 4: [0.36, 0.64, 1.09, 1.67], 8: [0.26, 0.48, 0.88, 1.54]}
BLOCKS = [16, 32, 64, 128]
model = {(int(e["p"]), int(e["b"])): e["speedup"] for e in json.loads((records / "model.json").read_text())["grid"]}


def sim_time(p, b):
    r = json.loads((records / f"sim-p{p}-b{b}.json").read_text())
    return r["history"][1]["time_s"]  # one iteration: training blocks and the test set


rows = []
for p in (2, 4, 8):
    for j, b in enumerate(BLOCKS):
        sim = sim_time(1, b) / sim_time(p, b)
        rows.append({"p": p, "b": b, "paper": PAPER[p][j], "model": model[(p, b)], "sim": sim,
                     "model_diff": model[(p, b)] / PAPER[p][j] - 1, "sim_diff": sim / PAPER[p][j] - 1})
with open(csv_path, "w", newline="") as out:
    w = csv.DictWriter(out, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
print("Table VII, function example on Bat Cave: speedup (paper / wulf model / wulf simulation)")
print(f"{'p':>3} " + "".join(f"{'b = ' + str(b):>24}" for b in BLOCKS))
for p in (2, 4, 8):
    cells = [r for r in rows if r["p"] == p]
    print(f"{p:>3} " + "".join(f"{r['paper']:>8.2f}{r['model']:>8.2f}{r['sim']:>8.2f}" for r in cells))
worst_model = max(abs(r["model_diff"]) for r in rows)
worst_sim = max(abs(r["sim_diff"]) for r in rows)
print(f"largest difference from the paper: model {100 * worst_model:.1f}%, simulation {100 * worst_sim:.1f}% "
      f"(target 5%: {'met' if max(worst_model, worst_sim) <= 0.05 else 'NOT met'})")
