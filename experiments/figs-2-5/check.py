#!/usr/bin/env python3
"""CTest experiments.figs-2-5: runs sweep.py (360 simulations, both cores) and compares
README.md's two tables with results.csv: model against simulation per problem and cluster
(points where the model's assumptions hold, the largest difference there, how many points
are within 5%, the lowest and highest difference), and the paper's claims (model and
simulated speedups, the smallest block size with a speedup above 1). Tolerance: the README's
digits (check_common.py).

    experiments/figs-2-5/check.py [build dir] [work dir]
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import check_common  # noqa: E402

check = check_common.Check(__file__)
check.run("sweep.py", check.build)
points = [dict(r, p=int(r["p"]), b=int(r["b"]), model=float(r["model_speedup"]), sim=float(r["sim_speedup"]),
               difference=100 * float(r["difference"]), hold=r["assumptions_hold"] == "True")
          for r in check.csv("results.csv")]
CLUSTERS = {"Bat Cave": "batcave", "Messner": "messner"}


def chosen(problem, cluster):
    return [r for r in points if r["problem"] == problem and r["cluster"] == CLUSTERS[cluster]]


_, table = check.table("problem", "points where the assumptions hold")
for cells in table:
    problem, cluster = (c.strip() for c in cells[0].split(","))
    rows = chosen(problem, cluster)
    hold = [r for r in rows if r["hold"]]
    what = f"{problem}, {cluster}"
    check.same(f"{what}: points where the assumptions hold", cells[1], len(hold))
    check.same(f"{what}: largest difference there (%)", check_common.numbers(cells[2])[0],
               max((r["difference"] for r in hold), key=abs))
    within = sum(abs(r["difference"]) <= 5 for r in rows)
    check.same(f"{what}: all points within 5%", cells[3], f"{within}/{len(rows)}")
    check.same_numbers(f"{what}: all points' difference (%)", cells[4],
                       [min(r["difference"] for r in rows), max(r["difference"] for r in rows)], ["lowest", "highest"])

_, table = check.table("claim (seed 000, section V-C)", "problem", "cluster", "p", "b")
for cells in table:
    problem, cluster = cells[1], cells[2]
    rows = {(r["p"], r["b"]): r for r in chosen(problem, cluster)}
    procs = [int(p) for p in check_common.numbers(cells[3])]
    for engine, cell in (("model", cells[5]), ("sim", cells[6] if cells[6] != "same" else cells[5])):
        what = f"{problem}, {cluster}, p = {cells[3]}, {engine}"
        if cells[4] == "smallest b with a speedup above 1":
            firsts = [str(min((b for (q, b), r in rows.items() if q == p and r[engine] > 1), default=0)) for p in procs]
            check.same(f"{what}: smallest b with a speedup above 1", cell, ", ".join(firsts))
        else:
            b = int(cells[4])
            check.same_numbers(f"{what}, b = {b}: speedup", cell, [rows[(p, b)][engine] for p in procs],
                               [f"p = {p}" for p in procs])
check.finish()
