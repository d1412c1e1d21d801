#!/usr/bin/env python3
"""CTest experiments.platform-calibration: runs run.sh and compares README.md's table of points
(how many, the largest difference from the paper, where, and how many within the target) with
results.csv. Tolerance: the README's digits (check_common.py).

    experiments/platform-calibration/check.py [build dir] [work dir]
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import check_common  # noqa: E402

check = check_common.Check(__file__)
check.run("run.sh", check.build)
points = [dict(r, p=int(r["p"]), w=int(r["w"]), difference=float(r["difference"]), paper_s=float(r["paper_s"]),
               sim_s=float(r["sim_s"]), within=r["within"] == "True") for r in check.csv("results.csv")]
# README row (its first cell's start) -> the points of results.csv it sums up
groups = {
    "Bat Cave allreduce, p = 2, 4, 8": lambda r: r["what"].startswith("batcave") and r["p"] < 16,
    "Bat Cave allreduce, p = 16": lambda r: r["what"].startswith("batcave") and r["p"] == 16,
    "Messner allreduce": lambda r: r["what"].startswith("messner"),
    "Bunyip binomial reduce": lambda r: r["what"].startswith("bunyip"),
}
_, table = check.table("what", "points", "largest difference", "within target")
for cells in table:
    name = next((g for g in groups if cells[0].startswith(g)), None)
    if name is None:
        check.same("a row of the table", cells[0], "one of: " + "; ".join(groups))
        continue
    chosen = [r for r in points if groups[name](r)]
    worst = max(chosen, key=lambda r: abs(r["difference"]))
    check.same(f"{name}: points", cells[1], len(chosen))
    if len(chosen) == 1:  # "8.506 s against 8.5 s (+0.1%)"
        check.same_numbers(name, cells[2], [worst["sim_s"], worst["paper_s"], 100 * worst["difference"]],
                           ["simulated s", "paper s", "difference %"])
        check.same(f"{name}: within target", cells[3], "yes" if worst["within"] else "no")
        continue
    stated = check_common.numbers(cells[2])
    check.same(f"{name}: largest difference (%)", stated[0], 100 * abs(worst["difference"]))
    if len(stated) > 1:  # "2.3% (p = 2, w = 4 096)"
        check.same_numbers(f"{name}: largest difference at", cells[2].split("(", 1)[1], [worst["p"], worst["w"]],
                           ["p", "w"])
    within = sum(r["within"] for r in chosen)
    check.same(f"{name}: within target", cells[3], "all" if within == len(chosen) else f"{within} of {len(chosen)}")
check.finish()
