#!/usr/bin/env python3
"""CTest experiments.cg: runs run.sh and compares every cell of README.md's table (simulated
time per iteration, patterns per gradient pass, errors, idle time per rank and the fast
worker's wait), the chunk's cost and the figures of its reading with results.json.
Tolerance: the README's digits (check_common.py).

    experiments/cg/check.py [build dir] [work dir]
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import check_common  # noqa: E402

check = check_common.Check(__file__)
check.run("run.sh", check.build)
results = json.loads(check.path("results.json").read_text())
runs, chunk = results["runs"], results["chunk"]


def run_name(cell):
    """ "toy4-slow, `--load-balance 0.8`" -> "toy4-slow-lb0.8"; "toy4, no load balancing" -> "toy4-plain"."""
    platform, how = cell.split(",", 1)
    fraction = check_common.numbers(how)
    return f"{platform}-" + (f"lb{float(fraction[0]):.1f}" if fraction else "plain")


_, table = check.table("run", "s / iteration")
for cells in table:
    name = run_name(cells[0])
    r = runs[name]
    check.same(f"{name}: s / iteration", check_common.numbers(cells[1])[0], r["iteration_s"])
    check.same(f"{name}: patterns per gradient pass", cells[2], r["patterns_per_gradient_pass"])
    check.same(f"{name}: train mse", cells[3], r["train_mse"])
    check.same(f"{name}: test accuracy (%)", check_common.numbers(cells[4])[0], 100 * r["test_accuracy"])
    check.same_numbers(f"{name}: idle s / pass", cells[5], r["idle_s_per_pass"], [f"rank {k}" for k in range(4)])
    check.same(f"{name}: fast worker waits, s / pass", check_common.numbers(cells[6])[0],
               r["fast_worker_wait_s_per_pass"])

m = check.sentence(r"One chunk of 32 patterns \(([\d ]+) flops each.*?\) takes ([\d.]+) s on the slow host, "
                   r"([\d.]+) s on a fast one")
if m:
    check.same("chunk: flops per pattern", m[0], chunk["flops_per_pattern"])
    check.same("chunk: slow host (s)", m[1], chunk["slow_s"])
    check.same("chunk: fast host (s)", m[2], chunk["fast_s"])
plain, balanced = runs["toy4-slow-plain"], runs["toy4-slow-lb0.7"]
m = check.sentence(r"With --load-balance 0\.7 a fast worker waits ([\d.]+) s per pass, less than one chunk of the "
                   r"slow host \(([\d.]+) s\), against ([\d.]+) s without load balancing.*?The iteration takes "
                   r"([\d.]+) s instead of ([\d.]+) s \(([\d.]+)x faster\)")
if m:
    check.same("reading: wait at 0.7 (s)", m[0], balanced["fast_worker_wait_s_per_pass"])
    check.same("reading: chunk on the slow host (s)", m[1], chunk["slow_s"])
    check.same("reading: wait without load balancing (s)", m[2], plain["fast_worker_wait_s_per_pass"])
    check.same("reading: iteration at 0.7 (s)", m[3], balanced["iteration_s"])
    check.same("reading: iteration without load balancing (s)", m[4], plain["iteration_s"])
    check.same("reading: faster (x)", m[5], plain["iteration_s"] / balanced["iteration_s"])
check.finish()
