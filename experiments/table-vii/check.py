#!/usr/bin/env python3
"""CTest experiments.table-vii: runs run.sh and compares every cell of README.md's table (paper /
wulf's model / wulf's simulation, to the digits printed) and the largest differences its text
names with results.csv. Tolerance: the README's digits (check_common.py).

    experiments/table-vii/check.py [build dir] [work dir]
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import check_common  # noqa: E402

check = check_common.Check(__file__)
check.run("run.sh", check.build)
rows = {(int(r["p"]), int(r["b"])): {k: float(v) for k, v in r.items()} for r in check.csv("results.csv")}

header, table = check.table("p", "b = 16")
blocks = [int(check_common.numbers(h)[0]) for h in header[1:]]
for cells in table:
    p = int(cells[0])
    for b, cell in zip(blocks, cells[1:]):
        r = rows[(p, b)]
        check.same_numbers(f"p = {p}, b = {b}", cell, [r["paper"], r["model"], r["sim"]],
                           ["paper", "model", "simulation"])

# The text's largest differences from the paper, and the simulation against the model.
worst_model = max(rows, key=lambda k: abs(rows[k]["model_diff"]))
m = check.sentence(r"every cell within ([\d.]+)% of the paper \(largest ([+-][\d.]+)%, p = (\d+) and b = (\d+)\)")
if m:
    check.same("model: every cell within (%)", m[0], 100 * abs(rows[worst_model]["model_diff"]))
    check.same("model: largest difference (%)", m[1], 100 * rows[worst_model]["model_diff"])
    check.same("model: largest difference at p, b", f"{m[2]}, {m[3]}", "%d, %d" % worst_model)
far = sorted(k for k in rows if abs(rows[k]["sim_diff"]) > 0.05)
m = check.sentence(r"within 5% of the paper in (\d+) of 12 cells\. The twelfth is p = (\d+), b = (\d+), "
                   r"at ([+-][\d.]+)%")
if m:
    check.same("simulation: cells within 5% of the paper", m[0], str(12 - len(far)))
    check.same("simulation: the cell beyond 5%, p, b", f"{m[1]}, {m[2]}", ", ".join("%d, %d" % k for k in far))
    if len(far) == 1:
        check.same("simulation: its difference (%)", m[3], 100 * rows[far[0]]["sim_diff"])
ratios = [100 * (r["sim"] / r["model"] - 1) for r in rows.values()]
m = check.sentence(r"put the simulation between ([+-][\d.]+)% and ([+-][\d.]+)% of the model's speedup")
if m:
    check.same("simulation against the model, lowest (%)", m[0], min(ratios))
    check.same("simulation against the model, highest (%)", m[1], max(ratios))
check.finish()
