#!/usr/bin/python3
"""Seeds 003 and 004 beside wulf's simulation of them (the records of run.sh), and the
figures seed003.png and seed004.png.

    table.py RECORDS_DIR WALL.txt [FIGURE_DIR]

Times per iteration are the strategy's own simulated seconds (final.strategy.iterations_s:
compute, update and collectives of the iterations, not wulf's evaluation after each). Runs
without the arithmetic (NUMERICS=off run.sh) have no errors: "-" in their place.
"""
import json
import pathlib
import statistics
import sys

# Seed 003: "If you set learning rate to 2 and iteration to 1000, cost will be around 0.25
# and precision will be around 97%." Its code's comments (mnist-nn.py in
# DT42/neural-network-model-manipulations) add, at learning rate 2: iteration -> (precision,
# cost or None).
SEED003 = (0.25, 0.97)
SEED003_CODE = {50: (0.82, None), 100: (0.87, None), 200: (0.93, 0.572), 300: (0.94, 0.485)}
# Seed 004, Table 1 (gprof of the serial code, 784 pixels, 100 epochs): 213.92 s in all,
# neural_network_training_step 2.14 s per call (one epoch); hypothesis 120.92 s over
# 6 010 000 calls, gradient update 92.37 s over 6 000 000.
SEED004_SERIAL_EPOCH = 2.14
SIZES = {"28x28": 784, "56x58": 3248, "112x112": 12544}


def load(records):
    return {p.stem: json.loads(p.read_text()) for p in sorted(pathlib.Path(records).glob("*.json"))}


def walls(path):
    out = {}
    for line in pathlib.Path(path).read_text().split("\n"):
        if line.strip():
            name, seconds = line.split()
            out[name] = float(seconds)
    return out


def pct(x, width):
    """x as a percentage in width characters, "-" where the run had no arithmetic."""
    return f"{100 * x:>{width - 1}.2f}%" if x is not None else f"{'-':>{width}}"


def num(x, spec):
    return format(x, spec) if x is not None else format("-", spec.split(".")[0])


def flops_per_pattern(r):
    """The flops charged per trained pattern: the forward and backward flops the kernels perform."""
    return r["performance"]["forward_flops_per_pattern"] + r["performance"]["backward_flops_per_pattern"]


def per_iteration(r):
    return r["final"]["strategy"]["iterations_s"] / r["final"]["iterations"]


def comm_per_iteration(r, rank=0):
    # comm_s of a rank holds every collective: the strategy's and wulf's error allreduces
    # (two per iteration: the running sums and the test set's). Only the strategy's are
    # wanted; they are what iterations_s holds beyond the compute and update of rank 0.
    ph = r["phases"]["ranks"][rank]
    compute = ph["forward_s"] + ph["backward_s"] + ph["update_s"]
    return max(0.0, (r["final"]["strategy"]["iterations_s"] - compute) / r["final"]["iterations"])


def seed003(recs, wall):
    print("Seed 003: 400-25-10 by scatter/gather on dt42.xml, learning rate 2, 1 000 iterations")
    print("(cost: the logistic cost per image over the 5 000 training images; precision: their")
    print(" share classified right; test: the 10 000 MNIST test images at 20x20, not in seed 003)")
    print(f"{'run':>14} | {'cost':>6} {'precision':>9} {'test acc':>8} | {'s/iteration':>11} {'comm ms/it':>10} "
          f"{'scatter s':>9} {'1000 it s':>9} | {'wall s':>6}")
    print(f"{'seed 003':>14} | {SEED003[0]:>6.2f} {100 * SEED003[1]:>8.0f}% {'':>8} | {'(figures only)':>11}")
    rows = {}
    for name in ("s003-np1-s1", "s003-np1-s2", "s003-np1-s3", "s003-np2-s1"):
        r = recs.get(name)
        if not r:
            continue
        f = r["final"]
        it = per_iteration(r)
        rows[name] = it
        train, test = f.get("train") or {}, f.get("test") or {}
        print(f"{name:>14} | {num(train.get('loss'), '>6.3f')} {pct(train.get('accuracy'), 9)} "
              f"{pct(test.get('accuracy'), 8)} | {it:>11.5f} {1e3 * comm_per_iteration(r):>10.3f} "
              f"{f['strategy']['scatter_s']:>9.4f} {f['strategy']['iterations_s']:>9.2f} | {wall.get(name, 0):>6.1f}")
    if "s003-np1-s1" in rows and "s003-np2-s1" in rows:
        print(f"speed-up of an iteration, 2 nodes over 1: {rows['s003-np1-s1'] / rows['s003-np2-s1']:.3f}")
    r = recs.get("s003-np1-s1")
    if r:
        print("along the way (seed 1, 1 node) beside the comments of seed 003's code (learning rate 2):")
        hist = {h["iteration"]: h for h in r["history"]}
        for it, (prec, cost) in SEED003_CODE.items():
            h = hist[it]
            cost_text = f"{cost:.3f}" if cost else "  -  "
            print(f"  iteration {it:>4}: code {100 * prec:.0f}% cost {cost_text} | wulf "
                  f"{pct(h.get('train_accuracy'), 6)} cost {num(h['train_error'], '.3f')}")
    a = recs.get("s003-np1-s1")
    if a and "s003-np2-s1" in recs and a["history"][1]["train_error"] is not None:
        b = recs["s003-np2-s1"]
        diff = max(abs(x["train_error"] - y["train_error"]) for x, y in zip(a["history"][1:], b["history"][1:]))
        print(f"1 node against 2 nodes, seed 1: largest difference of the cost over the 1 000 iterations {diff:.2e}")
    print()


def seed004(recs, wall):
    grid = {}
    for name, r in recs.items():
        if not name.startswith("s004-") or name.endswith("numerics"):
            continue
        _, size, n, t = name.split("-")
        grid[(size, int(n[1:]), int(t[1:]))] = r
    if not grid:
        return grid
    nodes = sorted({k[1] for k in grid})
    threads = sorted({k[2] for k in grid})
    print("Seed 004: softmax classifier, root update with threads, sorgan.xml; time only (numerics off)")
    print(f"serial epoch (1 node, 1 thread): paper {SEED004_SERIAL_EPOCH} s at 784 pixels (gprof, Table 1)")
    for size in SIZES:
        r = grid.get((size, 1, 1))
        if r:
            w, fp = r["config"]["parameters"], flops_per_pattern(r)
            print(f"  {size:>7} ({SIZES[size]:>5} pixels, w = {w:>6}): wulf {per_iteration(r):.4f} s "
                  f"(60 000 x {fp} flops = {60000 * fp / 1e9:.2f} Gflop at 2 Gflop/s)")
    print()
    print("seconds per epoch (the strategy's own), rows nodes, columns threads")
    for size in SIZES:
        print(f"{size} ({SIZES[size]} pixels)")
        print(f"{'nodes':>6} | " + " ".join(f"{'T=' + str(t):>9}" for t in threads))
        for n in nodes:
            print(f"{n:>6} | " + " ".join(f"{per_iteration(grid[(size, n, t)]):>9.5f}" for t in threads))
    print()
    print("speed-up against nodes (same threads; paper: 'near-linear' up to 4 nodes, its Figs. 6b-8b)")
    for size in SIZES:
        for t in (1, 16):
            base = per_iteration(grid[(size, 1, t)])
            print(f"  {size:>7} T={t:<2} | " + " ".join(
                f"{n:>2} nodes {base / per_iteration(grid[(size, n, t)]):>5.2f}" for n in nodes))
    print()
    print("speed-up against threads on 1 node (paper: about 10x for all image sizes, Fig. 5b)")
    for size in SIZES:
        base = per_iteration(grid[(size, 1, 1)])
        print(f"  {size:>7} | " + " ".join(f"T={t:<2} {base / per_iteration(grid[(size, 1, t)]):>5.2f}"
                                           for t in threads))
    print()
    print("communication per epoch (reduce + bcast, rank 0, ms), T = 16")
    for size in SIZES:
        print(f"  {size:>7} | " + " ".join(
            f"{n:>2} nodes {1e3 * comm_per_iteration(grid[(size, n, 16)]):>7.3f}" for n in nodes))
    r = recs.get("s004-28x28-n4-t1-numerics")
    if r:
        f = r["final"]
        print()
        print("784 pixels with the arithmetic, 4 nodes x 1 thread, 100 epochs, learning rate 0.5:")
        train, test = f.get("train") or {}, f.get("test") or {}
        print(f"  test accuracy {pct(test.get('accuracy'), 1)}, training accuracy {pct(train.get('accuracy'), 1)}"
              f" (seed 004 gives none); {f['strategy']['iterations_s']:.2f} s simulated for 100 epochs"
              f" ({per_iteration(r):.4f} s each), {wall.get('s004-28x28-n4-t1-numerics', 0):.0f} s wall here")
    print()
    return grid


def draw003(recs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for name, style in (("s003-np1-s1", "-"), ("s003-np1-s2", "-"), ("s003-np1-s3", "-"), ("s003-np2-s1", "--")):
        r = recs.get(name)
        if not r:
            continue
        h = r["history"][1:]
        nodes, seed = name.split("-")[1][2:], name.split("-")[2][1:]
        label = f"wulf, {nodes} node{'s' if nodes != '1' else ''}, seed {seed}"
        a.plot([x["iteration"] for x in h], [x["train_error"] for x in h], style, lw=1, label=label)
        b.plot([x["iteration"] for x in h], [100 * x["train_accuracy"] for x in h], style, lw=1, label=label)
    a.plot([1000], [SEED003[0]], "k*", ms=12, label="seed 003: about 0.25")
    a.plot([200, 300], [0.572, 0.485], "ks", label="seed 003's code comments")
    b.plot([1000], [100 * SEED003[1]], "k*", ms=12, label="seed 003: about 97%")
    b.plot(list(SEED003_CODE), [100 * v[0] for v in SEED003_CODE.values()], "ks", label="seed 003's code comments")
    a.set_yscale("log")
    a.set_xlabel("iteration (batch gradient descent, rate 2)")
    a.set_ylabel("cost (logistic, per image)")
    a.set_title("seed 003: 400-25-10, 5 000 images")
    b.set_xlabel("iteration")
    b.set_ylabel("precision on the training images, %")
    b.set_ylim(60, 100)
    b.set_title("precision")
    a.legend(fontsize=7)
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def draw004(grid, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    nodes = sorted({k[1] for k in grid})
    threads = sorted({k[2] for k in grid})
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    colors = {"28x28": "tab:blue", "56x58": "tab:green", "112x112": "tab:red"}
    for size in SIZES:
        for t, style in ((1, "-"), (16, "--")):
            base = per_iteration(grid[(size, 1, t)])
            a.plot(nodes, [base / per_iteration(grid[(size, n, t)]) for n in nodes], style, marker="o",
                   color=colors[size], label=f"{SIZES[size]} px, {t} thread{'s' if t > 1 else ''}")
        base = per_iteration(grid[(size, 1, 1)])
        b.plot(threads, [base / per_iteration(grid[(size, 1, t)]) for t in threads], marker="o", color=colors[size],
               label=f"{SIZES[size]} px")
    a.plot(nodes, nodes, ":", color="gray", label="linear")
    a.axvspan(0.8, 4.2, color="tab:orange", alpha=0.08, label="Infiniband nodes (paper's range)")
    a.set_xlabel("nodes (one rank each)")
    a.set_ylabel("speed-up of an epoch over 1 node")
    a.set_title("seed 004 on sorgan.xml: MPI")
    a.legend(fontsize=7)
    b.plot(threads, threads, ":", color="gray", label="linear")
    b.axhline(10, color="black", ls="--", label="paper: about 10x")
    b.set_xscale("log", base=2)
    b.set_xticks(threads, [str(t) for t in threads])
    b.set_xlabel("threads in the rank (1 node)")
    b.set_ylabel("speed-up of an epoch over 1 thread")
    b.set_title("seed 004: threads")
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    recs = load(sys.argv[1])
    wall = walls(sys.argv[2])
    seed003(recs, wall)
    grid = seed004(recs, wall)
    b = sum(v for k, v in wall.items() if k.startswith("s004-") and not k.endswith("numerics"))
    print("wall time here: seed 003 runs "
          f"{sum(v for k, v in wall.items() if k.startswith('s003')):.0f} s; seed 004 time grid {b:.0f} s "
          f"({len(grid)} runs); seed 004 with the arithmetic {wall.get('s004-28x28-n4-t1-numerics', 0):.0f} s")
    if len(sys.argv) > 3:
        out = pathlib.Path(sys.argv[3])
        if any(k.startswith("s003") and r["history"][1]["train_error"] is not None for k, r in recs.items()):
            draw003(recs, out / "seed003.png")
        if grid:
            draw004(grid, out / "seed004.png")


if __name__ == "__main__":
    main()
