#!/usr/bin/env python3
"""CTest experiments.seed003-004 (--times-only) and experiments.seed003-004.full: runs run.sh and
compares README.md's figures with the records (read by table.py's own functions).

--times-only (label experiments) runs NUMERICS=off run.sh, 7 s instead of 2 min: seed 003's
and seed 004's simulated times are those of the runs with the arithmetic (the simulated
time does not depend on it), so every table of times is compared: seed 003's time per
iteration, collectives, scatter and speed-up; seed 004's epochs, speed-ups against nodes and
threads, communication per epoch, and the time of its run with the arithmetic. Without it
(label experiments-long, cmake -DWULF_EXPERIMENTS_LONG=ON) run.sh runs whole and seed 003's
costs and precisions and seed 004's accuracies are compared too. Tolerance: the README's
digits (check_common.py).

    experiments/seed003-004/check.py [--times-only] [build dir] [work dir]
"""
import pathlib
import sys

here = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent))
sys.path.insert(0, str(here))
import check_common  # noqa: E402
import table  # noqa: E402  (this experiment's table.py: its readers of the records)

check = check_common.Check(__file__)
times_only = "--times-only" in check.options
check.run("run.sh", check.build, env={"NUMERICS": "off"} if times_only else None)
recs = table.load(check.path("records"))
numbers = check_common.numbers
SIZES = {784: "28x28", 3248: "56x58", 12544: "112x112"}


def grid(pixels, nodes, threads):
    return recs[f"s004-{SIZES[pixels]}-n{nodes}-t{threads}"]


def epoch(pixels, nodes, threads):
    return table.per_iteration(grid(pixels, nodes, threads))


# A. Seed 003: times (the runs of seed 1).
one, two = recs["s003-np1-s1"], recs["s003-np2-s1"]
figures = {  # row of README's time table -> (1 node, 2 nodes)
    "time per iteration (simulated)": (1e3 * table.per_iteration(one), 1e3 * table.per_iteration(two)),
    "of which gather + bcast": (None, 1e3 * table.comm_per_iteration(two)),
    "scatter of the data, once": (None, two["final"]["strategy"]["scatter_s"]),
    "1 000 iterations": (one["final"]["strategy"]["iterations_s"],  # 2 nodes: "32.5 s (+0.11 s scatter)"
                         (two["final"]["strategy"]["iterations_s"], two["final"]["strategy"]["scatter_s"])),
    "speed-up of an iteration": (1.0, table.per_iteration(one) / table.per_iteration(two)),
}
_, rows = check.table("", "1 node", "2 nodes")
for cells in rows:
    for nodes, cell, value in zip(("1 node", "2 nodes"), cells[1:], figures[cells[0]]):
        if value is not None:
            if isinstance(value, tuple):
                check.same_numbers(f"seed 003, {cells[0]}, {nodes}", cell, value, ["s", "scatter s"])
            else:
                check.same_numbers(f"seed 003, {cells[0]}, {nodes}", cell, [value])

# B. Seed 004.
_, rows = check.table("", "seed 004 (gprof, Table 1)", "wulf")
serial = grid(784, 1, 1)
flops = table.flops_per_pattern(serial)
for cells in rows:
    if cells[0].startswith("epoch"):
        check.same("seed 004, epoch at 784 pixels, 1 node, 1 thread (s)", numbers(cells[2])[0], epoch(784, 1, 1))
    else:  # "15.7 us (31 380 flops at 2 Gflop/s)"
        per_image = epoch(784, 1, 1) / 60000
        check.same_numbers("seed 004, per image", cells[2], [1e6 * per_image, flops, flops / per_image / 1e9],
                           ["us", "flops", "Gflop/s"])
m = check.sentence(r"At 3 248 and 12 544 pixels a 1-thread epoch takes ([\d.]+) s and ([\d.]+) s")
if m:
    check.same("seed 004, epoch at 3 248 pixels (s)", m[0], epoch(3248, 1, 1))
    check.same("seed 004, epoch at 12 544 pixels (s)", m[1], epoch(12544, 1, 1))

header, rows = check.table("pixels", "threads", "2 nodes")
node_counts = [int(numbers(h)[0]) for h in header[2:]]
for cells in rows:
    pixels, threads = int(check_common.value_of(cells[0])), int(cells[1])
    check.same_numbers(f"seed 004, {pixels} pixels, {threads} threads, speed-up", " ".join(cells[2:]),
                       [epoch(pixels, 1, threads) / epoch(pixels, n, threads) for n in node_counts],
                       [f"{n} nodes" for n in node_counts])

header, rows = check.table("pixels", "reduce + bcast, 2 nodes (ms)")
for cells in rows:
    pixels = int(check_common.value_of(cells[0]))
    check.same_numbers(f"seed 004, {pixels} pixels, 16 threads", " ".join(cells[1:]),
                       [1e3 * table.comm_per_iteration(grid(pixels, n, 16)) for n in (2, 4, 8, 10)]
                       + [1e3 * epoch(pixels, 4, 16)],
                       [f"reduce + bcast on {n} nodes (ms)" for n in (2, 4, 8, 10)] + ["epoch on 4 nodes (ms)"])

header, rows = check.table("threads", "2", "4")
thread_counts = [int(h) for h in header[1:]]
for cells in rows:
    if cells[0].startswith("wulf"):  # "every image size"
        for pixels in SIZES:
            check.same_numbers(f"seed 004, {pixels} pixels, 1 node, speed-up", " ".join(cells[1:]),
                               [epoch(pixels, 1, 1) / epoch(pixels, 1, t) for t in thread_counts],
                               [f"{t} threads" for t in thread_counts])

# C. Seed 004 with the arithmetic, 4 nodes, 100 epochs.
c = recs["s004-28x28-n4-t1-numerics"]
_, rows = check.table("test accuracy", "training accuracy", "simulated time")
for cells in rows:  # "23.54 s (0.235 s per epoch: 0.941 s / 4)"
    check.same_numbers("seed 004 with the arithmetic, simulated time", cells[2],
                       [c["final"]["strategy"]["iterations_s"], table.per_iteration(c), epoch(784, 1, 1), 4],
                       ["100 epochs (s)", "per epoch (s)", "1 node's epoch (s)", "nodes"])
    if not times_only:
        check.same("seed 004 with the arithmetic, test accuracy (%)", numbers(cells[0])[0],
                   100 * c["final"]["test"]["accuracy"])
        check.same("seed 004 with the arithmetic, training accuracy (%)", numbers(cells[1])[0],
                   100 * c["final"]["train"]["accuracy"])

if not times_only:  # seed 003's errors
    runs = {"wulf, 1 node, seed 1": "s003-np1-s1", "wulf, 1 node, seed 2": "s003-np1-s2",
            "wulf, 1 node, seed 3": "s003-np1-s3", "wulf, 2 nodes, seed 1": "s003-np2-s1"}
    _, rows = check.table("", "cost", "precision (training images)", "test accuracy")
    for cells in rows:
        if cells[0] in runs:
            f = recs[runs[cells[0]]]["final"]
            check.same_numbers(f"seed 003, {cells[0]}", " ".join(cells[1:]),
                               [f["train"]["loss"], 100 * f["train"]["accuracy"], 100 * f["test"]["accuracy"]],
                               ["cost", "precision %", "test accuracy %"])
    history = {h["iteration"]: h for h in one["history"]}
    _, rows = check.table("iteration", "code: precision, cost", "wulf: precision, cost")
    for cells in rows:
        h = history[int(cells[0])]
        check.same_numbers(f"seed 003, 1 node, seed 1, iteration {cells[0]}", cells[2],
                           [100 * h["train_accuracy"], h["train_error"]], ["precision %", "cost"])
check.finish()
