#!/usr/bin/env python3
"""CTest experiments.toy-speedup: runs the simulated half of run.sh (ENGINES=sim) and compares
README.md's sim rows (iteration time at p = 1, speed-ups at p = 2 and 4) and the simulated
figures its text names with results.csv and the records. The real rows are wall-clock:
never compared. Tolerance: the README's digits (check_common.py).

    experiments/toy-speedup/check.py [build dir] [work dir]
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import check_common  # noqa: E402

check = check_common.Check(__file__)
check.run("run.sh", check.build, env={"ENGINES": "sim"})
rows = {(int(r["p"]), int(r["b"])): r for r in check.csv("results.csv") if r["engine"] == "sim"}

header, table = check.table("engine", "p", "b = 16")
blocks = [int(check_common.numbers(h)[0]) for h in header[2:]]
for cells in table:
    if not cells[0].startswith("sim"):
        continue  # wall-clock
    p = int(cells[1])
    for b, cell in zip(blocks, cells[2:]):
        r = rows[(p, b)]
        if "iteration" in cells[0]:
            check.same(f"sim, p = {p}, b = {b}: iteration (ms)", cell, 1e3 * float(r["iteration_s"]))
        else:
            check.same(f"sim, p = {p}, b = {b}: speedup", cell, float(r["speedup"]))


def per_iteration(name, *phases):
    r = check.record(name + ".json")
    return 1e3 * sum(r["phases"]["ranks"][0][q] for q in phases) / r["final"]["iterations"]


m = check.sentence(r"([\d.]+) ms of communication per iteration on 2 ranks, ([\d.]+) ms on 4 .*?against ([\d.]+) ms "
                   r"of arithmetic .*?\(b = 256: ([\d.]+) on 2 ranks, ([\d.]+) on 4")
if m:
    check.same("comm per iteration, p = 2, b = 256 (ms)", m[0], per_iteration("sim-p2-b256", "comm_s"))
    check.same("comm per iteration, p = 4, b = 256 (ms)", m[1], per_iteration("sim-p4-b256", "comm_s"))
    check.same("arithmetic per block, p = 1, b = 256 (ms)", m[2],
               per_iteration("sim-p1-b256", "forward_s", "backward_s"))
    check.same("sim speedup, p = 2, b = 256", m[3], float(rows[(2, 256)]["speedup"]))
    check.same("sim speedup, p = 4, b = 256", m[4], float(rows[(4, 256)]["speedup"]))
check.finish()
