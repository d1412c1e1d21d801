"""The results of run.sh as markdown tables: per run its iterations, simulated time per
iteration, final and best errors, the time it took to reach a few error levels, and the time
from which a parallel curve stays below the one-processor curve.

  /usr/bin/python3 experiments/seed000-training/table.py RECORDS_DIR > results.md
"""
import json
import pathlib
import re
import sys

records = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "records")


def load(name):
    path = records / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def wall(name):
    log = records / f"{name}.log"
    if not log.exists():
        return None
    m = re.search(r": ([0-9.]+) s wall", log.read_text())
    return float(m.group(1)) if m else None


def curve(r, key):
    return [(h["time_s"], h[key]) for h in r["history"] if h.get(key) is not None]


def value_at(c, t):
    """The curve as it stood at time t: its last point at or before t."""
    v = None
    for x, y in c:
        if x > t:
            break
        v = y
    return v


def overtakes(ref, other):
    """The time from which `other` stays below `ref` to the end of the shorter run (None: it does not)."""
    end = min(ref[-1][0], other[-1][0])
    times = sorted({x for x, _ in ref + other if 0 < x <= end})
    since = None
    for t in reversed(times):
        if not value_at(other, t) < value_at(ref, t):
            break
        since = t
    return since


def time_to(c, level):
    return next((x for x, y in c if y <= level), None)


def fmt(v, unit="", digits=4):
    if v is None:
        return "never"
    if isinstance(v, float):
        return f"{v:.{digits}g}{unit}"
    return f"{v}{unit}"


def runs_table(title, names, key, levels, error_name, count=False):
    if not any((records / f"{name}.json").exists() for name in names):
        return {}
    print(f"### {title}\n")
    head = ["run", "p", "b", "iterations", "s / iteration", f"final {error_name}", f"best {error_name} (at s)"]
    head += [f"time to {fmt(level)}" for level in levels] + ["wall"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    curves = {}
    for name in names:
        r = load(name)
        if r is None:
            continue
        c = r["config"]
        f = r["final"]
        cv = curve(r, key)
        curves[name] = cv
        best = min(cv[1:], key=lambda p: p[1])
        it = f["iterations"]
        fin = cv[-1][1]
        row = [name, c["np"], c["block"] if c.get("strategy") != "average"
               else f"{c['block']} (a = {c['average_interval']})", it, fmt(f["time_s"] / it, " s"),
               fmt(int(fin) if count else fin), f"{fmt(int(best[1]) if count else best[1])} ({best[0]:.0f})"]
        row += [fmt(time_to(cv, level), " s") for level in levels]
        row.append(fmt(wall(name), " s", 3))
        print("| " + " | ".join(str(x) for x in row) + " |")
    print()
    return curves


def overtake_table(curves, ref, others, what):
    if ref not in curves:
        return
    print(f"When the parallel curves of {what} overtake {ref}: the simulated time from which each stays below it "
          "to the end of the shorter run (each curve read as a step: its last point at or before the time):\n")
    print("| run | below the one-processor curve from |")
    print("|---|---|")
    for name in others:
        if ref in curves and name in curves:
            print(f"| {name} | {fmt(overtakes(curves[ref], curves[name]), ' s')} |")
    print()


print("# Results (written by table.py from records/)\n")
print("Times are simulated seconds on the paper's cluster; `wall` is what the run took on this machine.\n")
c6 = runs_table("Fig. 6: function on Messner (test RMSE)",
                ["fig6-p1-b4"] + [f"fig6-p{p}-b64" for p in (2, 4, 8, 16)], "test_error", [0.1, 0.05, 0.04],
                "test RMSE")
overtake_table(c6, "fig6-p1-b4", [f"fig6-p{p}-b64" for p in (2, 4, 8, 16)], "Fig. 6")
c7 = runs_table("Fig. 7: encoder on Bat Cave (training-set RMSE)",
                ["fig7-p1-b4"] + [f"fig7-p{p}-b64" for p in (2, 4, 8)], "train_error", [0.06, 0.03, 0.01],
                "RMSE")
overtake_table(c7, "fig7-p1-b4", [f"fig7-p{p}-b64" for p in (2, 4, 8)], "Fig. 7")
c7m = runs_table("Encoder on Messner, b = 32 in parallel (text after Fig. 7; training-set RMSE)",
                 ["fig7m-p1-b4"] + [f"fig7m-p{p}-b32" for p in (4, 8, 16)], "train_error", [0.06, 0.03, 0.01],
                 "RMSE")
overtake_table(c7m, "fig7m-p1-b4", [f"fig7m-p{p}-b32" for p in (4, 8, 16)], "the encoder on Messner")
c8 = runs_table("Figs. 8-9: digits on Messner (wrong test patterns of 10 000)",
                ["fig8-p1-b16"] + [f"fig8-p{p}-b200" for p in (2, 4, 8, 16)], "test_class_errors",
                [1000, 500, 400, 323], "test errors", count=True)
overtake_table(c8, "fig8-p1-b16", [f"fig8-p{p}-b200" for p in (2, 4, 8, 16)], "Fig. 8")
c10 = runs_table("Fig. 10: digits with weight averaging on Messner (wrong test patterns of 10 000)",
                 ["fig8-p1-b16"] + [f"fig10-p{p}-b16-a300" for p in (2, 4, 8, 16)], "test_class_errors",
                 [1000, 500, 400, 323], "test errors", count=True)
overtake_table(c10, "fig8-p1-b16", [f"fig10-p{p}-b16-a300" for p in (2, 4, 8, 16)], "Fig. 10")


def seeds_table():
    """Figs. 8-9 with seeds 1-3: the final and best test errors of each configuration."""
    configs = [("fig8-p1-b16", 1)] + [(f"fig8-p{p}-b200", p) for p in (2, 4, 8)]
    rows = []
    for base, p in configs:
        runs = [(s, load(base if s == 1 else f"{base}-s{s}")) for s in (1, 2, 3)]
        runs = [(s, r) for s, r in runs if r is not None]
        if len(runs) < 2:
            continue
        finals = [int(curve(r, "test_class_errors")[-1][1]) for _, r in runs]
        bests = [int(min(y for _, y in curve(r, "test_class_errors")[1:])) for _, r in runs]
        rows.append([base, p, ", ".join(str(x) for x in finals), f"{sum(finals) / len(finals):.0f}",
                     f"{max(finals) - min(finals)}", ", ".join(str(x) for x in bests)])
    if not rows:
        return
    print("### Figs. 8-9 over seeds 1, 2, 3 (test errors at the end of 2 000 simulated s)\n")
    print("| run | p | final errors, seeds 1, 2, 3 | mean | spread | best errors, seeds 1, 2, 3 |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")
    print()


seeds_table()
