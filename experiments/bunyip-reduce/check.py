#!/usr/bin/env python3
"""CTest experiments.bunyip-reduce: runs run.sh and compares README.md's reduce table (library,
four-stage and each stage, on both platforms), its Fig. 6 table of speed-ups and the
differences its text names with results.json. Tolerance: the README's digits
(check_common.py).

    experiments/bunyip-reduce/check.py [build dir] [work dir]
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import check_common  # noqa: E402

check = check_common.Check(__file__)
check.run("run.sh", check.build)
results = json.loads(check.path("results.json").read_text())
reduce = results["reduce"]

header, table = check.table("", "library", "four-stage")
rows = {"seed 002": "paper", "`bunyip.xml`": "bunyip", "`bunyip-p2p.xml`": "bunyip-p2p"}
for cells in table:
    r = reduce[rows[cells[0]]]
    values = [r["library"], r["four-stage"]] + r["stages"]
    for name, cell, value in zip(header[1:], cells[1:], values):
        stated = check_common.numbers(cell)
        check.same(f"{cells[0]}: {name} (s)", stated[0], value)
        if len(stated) > 1:  # "4.39 s (-10%)": against the paper's
            check.same(f"{cells[0]}: {name} against seed 002 (%)", stated[1],
                       100 * (value / reduce["paper"][name] - 1))

_, table = check.table("patterns", "`bunyip.xml`", "`bunyip-p2p.xml`")
fig6 = {r["patterns"]: r for r in results["fig6"]}
for cells in table:
    n = int(check_common.value_of(cells[0]))
    r = fig6[n]
    check.same_numbers(f"Fig. 6, {n} patterns", " ".join(cells[1:]), [r["bunyip"], r["bunyip-p2p"], r["paper"]],
                       ["bunyip.xml", "bunyip-p2p.xml", "seed 002's reduce times"])

first, last = results["fig6"][0], results["fig6"][-1]
m = check.sentence(r"lower \(([\d.]+)% and ([\d.]+)% at 9\.26 M; ([\d.]+)% and ([\d.]+)% at 0\.19 M\)")
if m:
    for stated, r, platform in zip(m, (last, last, first, first), ("bunyip", "bunyip-p2p") * 2):
        check.same(f"Fig. 6 text: {platform}, {r['patterns']} patterns (%)", stated, 100 * (r[platform] - 1))
m = check.sentence(r"simulated compute, and gives ([\d.]+)% there")
if m:
    check.same("Fig. 6 text: seed 002's reduce times at 9.26 M (%)", m[0], 100 * (last["paper"] - 1))
m = check.sentence(r"the two reduces differ by ([\d.]+) s and ([\d.]+) s")
if m:
    for stated, platform in zip(m, ("bunyip", "bunyip-p2p")):
        check.same(f"library less four-stage on {platform}.xml (s)", stated,
                   reduce[platform]["library"] - reduce[platform]["four-stage"])
check.finish()
