"""Paper against simulation for the platform calibration; writes results.csv and fig1.png.

Seed 000 Table V (Ti and Tw in microseconds, see shared/seeds/README.md):
  Bat Cave Ti 365.868 us, Tw 0.798 us; Messner Ti 515.250 us, Tw 0.230 us;
  Tr(p) = Tw w ceil(log2 p) + Ti.
Seed 002 section 5.1: LAM's library reduce of 6.6 MB over 194 processes, 8.5 s.
"""
import csv
import json
import math
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

records, csv_path, png_path = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
TABLE_V = {"batcave": (365.868e-6, 0.798e-6), "messner": (515.250e-6, 0.230e-6)}
rows = []
for name, files in (("batcave", ["batcave.json", "batcave16.json"]), ("messner", ["messner.json"])):
    ti, tw = TABLE_V[name]
    for f in files:
        for c in json.loads((records / f).read_text())["collectives"]:
            p, w = c["np"], c["size"]
            paper = tw * w * math.ceil(math.log2(p)) + ti
            rows.append({"what": f"{name} allreduce rdb", "p": p, "w": w, "paper_s": paper, "sim_s": c["time_s"],
                         "target": 0.10, "note": "16 hosts: --grow 16" if f == "batcave16.json" else ""})
bunyip = json.loads((records / "bunyip.json").read_text())["collectives"][0]
rows.append({"what": "bunyip reduce binomial", "p": bunyip["np"], "w": bunyip["size"], "paper_s": 8.5,
             "sim_s": bunyip["time_s"], "target": 0.20, "note": "float"})
for r in rows:
    r["difference"] = (r["sim_s"] - r["paper_s"]) / r["paper_s"]
    r["within"] = abs(r["difference"]) <= r["target"]

with open(csv_path, "w", newline="") as out:
    w = csv.DictWriter(out, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)

print(f"{'what':24} {'p':>4} {'w':>8} {'paper':>11} {'simulated':>11} {'diff':>7}  target")
for r in rows:
    print(f"{r['what']:24} {r['p']:>4} {r['w']:>8} {1e3 * r['paper_s']:>9.3f}ms {1e3 * r['sim_s']:>9.3f}ms "
          f"{100 * r['difference']:>+6.1f}%  {'within' if r['within'] else 'OUTSIDE'} {100 * r['target']:.0f}%"
          f"{'  (' + r['note'] + ')' if r['note'] else ''}")
print(f"{sum(r['within'] for r in rows)} of {len(rows)} points within their target")

# Fig. 1 of seed 000 (Messner), and the same for Bat Cave: Tr against w, one line per p.
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
for ax, name in zip(axes, ("batcave", "messner")):
    ti, tw = TABLE_V[name]
    ws = [0, 70000]
    for p in (2, 4, 8, 16):
        steps = math.ceil(math.log2(p))
        line, = ax.plot(ws, [1e3 * (tw * w * steps + ti) for w in ws], linewidth=0.9, label=f"p = {p}: Tr(p), Table V")
        pts = sorted((r["w"], r["sim_s"]) for r in rows if r["what"].startswith(name) and r["p"] == p)
        ax.plot([w for w, _ in pts], [1e3 * t for _, t in pts], "o", color=line.get_color(), label=f"p = {p}: simulated")
    ax.set_xlabel("w (8-byte weights)")
    ax.set_ylabel("allreduce time (ms)")
    ax.set_title(f"{name}.xml, recursive doubling" + (" (p = 16 on --grow 16)" if name == "batcave" else ""), fontsize=10)
    ax.legend(fontsize=7, ncol=2)
fig.tight_layout()
fig.savefig(png_path, dpi=100)
