#!/usr/bin/python3
"""Seed 001's Tables 1 and 2 beside wulf's simulation of them (runs.csv from collect.py,
timing.csv and timing-check.csv from timing.sh), the seeds that did not learn listed apart,
and the figure.

    table.py runs.csv timing.csv timing-check.csv [ppt.png]

A run's time to learn is PPT's own simulated time: its rounds (runs.csv) times the time of
one round of its (p, e) without wulf's bookkeeping between iterations (timing.csv), plus
its stopping checks (final.strategy.check_s); 'comm' is the share of it in the allgather.
Means are over the seeds that learned; the count of those is given beside every mean.
"""
import csv
import statistics
import sys

# Seed 001, Table 1: nodes -> (seconds, best local epoch); Table 2 (8 nodes): local epoch ->
# (epochs, seconds, % communicating). Each an average of 10 (successful) runs.
TABLE1 = {1: (689, None), 2: (190, 128), 4: (177, 64), 8: (65, 32)}
TABLE2 = {32: (19891.2, 64.7, 80.6), 64: (44441.6, 86.0, 71.7), 128: (104448.0, 133.1, 57.5),
          256: (109568.0, 91.9, 42.6)}
SPEED = 2.4e9     # ppt-p4.xml's host speed


def load(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("p", "local_epoch", "seed", "learned", "rounds", "checks", "patterns_per_node",
                  "final_class_errors"):
            r[k] = int(r[k])
        for k in ("ppt_time_s", "rounds_s", "allgather_s", "check_s", "comm_share", "record_time_s",
                  "final_train_mse"):
            r[k] = float(r[k])
        r["wall_s"] = float(r["wall_s"]) if r["wall_s"] else float("nan")
    return rows


def load_timing(path):
    with open(path) as f:
        return {(int(r["p"]), int(r["local_epoch"])): (float(r["round_s"]), float(r["allgather_s"]))
                for r in csv.DictReader(f)}


def flops_per_pattern(path):
    """wulf's charge per trained pattern (the flops its kernels perform), from timing.csv."""
    with open(path) as f:
        return int(next(csv.DictReader(f))["flops_per_pattern"])


def reconstruct(rows, timing):
    """PPT's time and allgather time of every run from its rounds and the clean round time."""
    for r in rows:
        round_s, gather_s = timing[(r["p"], r["local_epoch"])]
        r["as_run_s"] = r["ppt_time_s"]  # final.strategy as run.sh ran it: bookkeeping skew inside
        r["ppt_time_s"] = r["rounds"] * round_s + r["check_s"]
        r["allgather_s"] = r["rounds"] * gather_s
        r["round_clean_s"], r["gather_clean_s"] = round_s, gather_s


def groups(rows):
    g = {}
    for r in rows:
        g.setdefault((r["p"], r["local_epoch"]), []).append(r)
    return g


def summary(runs):
    ok = [r for r in runs if r["learned"]]
    if not ok:
        return None
    time = [r["ppt_time_s"] for r in ok]
    return {
        "n": len(ok), "of": len(runs),
        "time": statistics.mean(time), "sd": statistics.stdev(time) if len(time) > 1 else 0.0,
        "rounds": statistics.mean(r["rounds"] for r in ok),
        "patterns": statistics.mean(r["patterns_per_node"] for r in ok),
        "comm": statistics.mean(r["allgather_s"] for r in ok) / statistics.mean(time),
        "record": statistics.mean(r["record_time_s"] for r in ok),
        "round_s": ok[0]["round_clean_s"],
        "gather_s": ok[0]["gather_clean_s"],
        "as_run": statistics.mean(r["as_run_s"] for r in ok),
        "wrong": max(r["final_class_errors"] for r in ok),
    }


def main():
    rows = load(sys.argv[1])
    reconstruct(rows, load_timing(sys.argv[2]))
    g = groups(rows)
    s = {k: summary(v) for k, v in g.items()}
    ps = sorted({k[0] for k in g})

    print("Seed 001 Table 1: time to learn 8-bit parity, best local epoch per node count")
    print("(paper: FANN on the 8-node P4 cluster; wulf: SimGrid on ppt-p4.xml, flops at 2.4 Gflop/s)")
    print(f"{'nodes':>5} | {'paper s':>8} {'paper e':>7} | {'wulf e':>6} {'wulf s':>8} {'sd':>7} "
          f"{'learned':>7} {'speed-up':>8} | {'paper speed-up':>14}")
    base = s.get((1, 256))
    for p in ps:
        cands = [(v["time"], e) for (q, e), v in s.items() if q == p and v]
        if not cands:
            print(f"{p:>5} | no configuration learned")
            continue
        t, e = min(cands)
        v = s[(p, e)]
        pt, pe = TABLE1.get(p, (float("nan"), None))
        sp = base["time"] / t if base else float("nan")
        print(f"{p:>5} | {pt:>8.0f} {pe if pe else 'batch':>7} | {e if p > 1 else 'batch':>6} {t:>8.3f} "
              f"{v['sd']:>7.3f} {v['n']:>4}/{v['of']:<2} {sp:>8.1f} | {689 / pt:>14.1f}")
    print()

    print("Seed 001 Table 2: 8 nodes, by local epoch (paper: average of 10 runs)")
    print(f"{'e':>4} | {'paper epochs':>12} {'= rounds x e':>12} {'paper s':>8} {'comm %':>6} | "
          f"{'wulf rounds':>11} {'rounds x e':>10} {'wulf s':>7} {'comm %':>6} {'learned':>7}")
    for e in sorted(TABLE2):
        ep, pt, pc = TABLE2[e]
        v = s.get((8, e))
        if not v:
            print(f"{e:>4} | {ep:>12.1f} {ep / e:>10.1f}xe {pt:>8.1f} {pc:>6.1f} | none learned")
            continue
        print(f"{e:>4} | {ep:>12.1f} {ep / e:>10.1f}xe {pt:>8.1f} {pc:>6.1f} | {v['rounds']:>11.1f} "
              f"{v['patterns']:>10.0f} {v['time']:>7.3f} {100 * v['comm']:>6.1f} {v['n']:>4}/{v['of']:<2}")
    print()

    print("Every configuration (wulf; seconds are simulated: 'time s' is PPT's own, rounds x the")
    print("clean round time + checks; 'as run s' is final.strategy of run.sh's runs, whose rounds")
    print("absorb the skew of wulf's allreduces after every iteration; 'record s' is the whole run")
    print("with wulf's check pass and error allreduce, which PPT does not have)")
    print(f"{'p':>2} {'e':>4} | {'learned':>7} {'rounds':>9} {'time s':>8} {'sd':>7} {'comm %':>6} "
          f"{'ms/round':>8} {'allgather ms':>12} {'as run s':>9} {'record s':>9} {'max wrong':>9} {'wall s':>7}")
    for (p, e) in sorted(g):
        v = s[(p, e)]
        wall = sum(r["wall_s"] for r in g[(p, e)])
        if not v:
            print(f"{p:>2} {e:>4} | {0:>4}/{len(g[(p, e)]):<2} none learned{'':>58} {wall:>7.0f}")
            continue
        print(f"{p:>2} {e:>4} | {v['n']:>4}/{v['of']:<2} {v['rounds']:>9.1f} {v['time']:>8.3f} {v['sd']:>7.3f} "
              f"{100 * v['comm']:>6.1f} {1e3 * v['round_s']:>8.3f} {1e3 * v['gather_s']:>12.3f} "
              f"{v['as_run']:>9.3f} {v['record']:>9.3f} {v['wrong']:>9} {wall:>7.0f}")
    print()

    print("Rounds to looser thresholds (first iteration whose exact training MSE is below; the")
    print("stopping rule's 0.01 beside them) and rounds x p, which stays near one number")
    print(f"{'p':>2} {'e':>4} | {'MSE 0.1':>8} {'0.05':>8} {'0.02':>8} {'all right':>9} {'0.01':>8} | {'p x rounds':>10}")
    for (p, e) in sorted(g):
        ok = [r for r in g[(p, e)] if r["learned"]]
        if not ok:
            continue

        def mean_of(key):
            vals = [int(r[key]) for r in ok if r[key] != ""]
            return f"{statistics.mean(vals):>8.0f}" if vals else f"{'-':>8}"
        right = [int(r["rounds_all_right"]) for r in ok if r["rounds_all_right"] != ""]
        right_text = f"{statistics.mean(right):.0f} ({len(right)})" if right else "-"
        print(f"{p:>2} {e:>4} | {mean_of('rounds_mse_0.1')} {mean_of('rounds_mse_0.05')} {mean_of('rounds_mse_0.02')} "
              f"{right_text:>9} {statistics.mean(r['rounds'] for r in ok):>8.0f} | "
              f"{p * statistics.mean(r['rounds'] for r in ok):>10.0f}")
    print("('all right': rounds to the first iteration with all 256 patterns right, over the runs")
    print(" that got there before stopping, their count in brackets)")
    print()

    failed = [r for r in rows if not r["learned"]]
    print(f"Runs that did not learn within the limit: {len(failed)}")
    for r in failed:
        print(f"  p {r['p']} e {r['local_epoch']} seed {r['seed']}: {r['status']} after {r['rounds']} rounds "
              f"(train MSE {r['final_train_mse']:.4g}, {r['final_class_errors']} of 256 wrong)")
    print()

    print("Per round, paper (Table 2 read as rounds = epochs / e) against wulf (8 nodes)")
    print(f"{'e':>4} | {'paper rounds':>12} {'s/round':>8} {'compute ms':>10} {'ms/pattern':>10} {'comm ms':>8} | "
          f"{'wulf compute ms':>15} {'ms/pattern':>10} {'allgather ms':>12}")
    for e in sorted(TABLE2):
        ep, pt, pc = TABLE2[e]
        rounds = ep / e
        per = pt / rounds
        comp, comm = per * (1 - pc / 100), per * pc / 100
        v = s.get((8, e))
        wc = (v["round_s"] - v["gather_s"]) * 1e3 if v else float("nan")
        wg = v["gather_s"] * 1e3 if v else float("nan")
        print(f"{e:>4} | {rounds:>12.1f} {per:>8.4f} {comp * 1e3:>10.2f} {comp * 1e3 / e:>10.3f} {comm * 1e3:>8.2f} | "
              f"{wc:>15.4f} {wc / e:>10.5f} {wg:>12.3f}")
    flops = flops_per_pattern(sys.argv[2])
    print(f"(wulf charges {flops} flops per trained pattern at {SPEED / 1e9} Gflop/s = "
          f"{flops / SPEED * 1e3:.5f} ms)")
    print()
    print("The reconstruction against runs with the arithmetic and 1 000 rounds per iteration")
    print("(timing-check.csv: the skew then falls on one round in 1 000)")
    timing = load_timing(sys.argv[2])
    with open(sys.argv[3]) as f:
        for c in csv.DictReader(f):
            p, e, rounds = int(c["p"]), int(c["local_epoch"]), int(c["rounds"])
            direct = float(c["rounds_s"])
            rebuilt = rounds * timing[(p, e)][0]
            print(f"  p {p} e {e} seed {c['seed']}: {rounds} rounds, {direct:.4f} s directly, {rebuilt:.4f} s "
                  f"as rounds x round time ({100 * (direct / rebuilt - 1):+.2f}%)")
    print()
    walls = [r["wall_s"] for r in rows]
    print(f"wall time of the {len(rows)} runs on this machine: {sum(walls):.0f} s, of which "
          f"{sum(r['wall_s'] for r in rows if not r['learned']):.0f} s in the {sum(1 for r in rows if not r['learned'])}"
          f" that did not learn")

    if len(sys.argv) > 4:
        draw(s, sys.argv[4])


def draw(s, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 5.4))
    es = [32, 64, 128, 256]
    colors = {2: "tab:blue", 4: "tab:green", 8: "tab:red"}
    for p in (2, 4, 8):
        pts = [(e, s[(p, e)]) for e in es if s.get((p, e))]
        a.errorbar([e for e, _ in pts], [v["time"] for _, v in pts], yerr=[v["sd"] for _, v in pts],
                   marker="o", color=colors[p], capsize=3, label=f"wulf, {p} nodes")
        b.plot([e for e, _ in pts], [100 * v["comm"] for _, v in pts], marker="o", color=colors[p],
               label=f"wulf, {p} nodes")
    if s.get((1, 256)):
        a.axhline(s[(1, 256)]["time"], color="gray", ls="--", label="wulf, 1 node (batch)")
    a.plot(es, [TABLE2[e][1] for e in es], marker="s", color="black", label="paper, 8 nodes (Table 2)")
    for p, (t, e) in TABLE1.items():
        if e:
            a.plot([e], [t], marker="*", ms=12, color=colors[p], ls="none",
                   label=f"paper, {p} nodes (Table 1, best e)")
    a.axhline(689, color="black", ls=":", label="paper, 1 node (689 s)")
    a.set_xscale("log", base=2)
    a.set_yscale("log")
    a.set_xticks(es, [str(e) for e in es])
    a.set_xlabel("local epoch (patterns per node per round)")
    a.set_ylabel("time to learn, s (simulated for wulf)")
    a.set_title("8-bit parity by PPT: time to learn")
    a.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    b.plot(es, [TABLE2[e][2] for e in es], marker="s", color="black", label="paper, 8 nodes (Table 2)")
    b.set_xscale("log", base=2)
    b.set_xticks(es, [str(e) for e in es])
    b.set_ylim(0, 100)
    b.set_xlabel("local epoch (patterns per node per round)")
    b.set_ylabel("% of the time in the allgather")
    b.set_title("share of time communicating")
    b.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
