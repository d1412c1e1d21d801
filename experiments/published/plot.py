#!/usr/bin/env python3
"""Draws results/published.json (run.py's record) as results/published.png: wulf's predictions
beside the published figures, one panel per source.

    python3 experiments/published/plot.py [RECORD.json [OUT.png]]

run.py draws it after each run; this redraws it from a record without running anything.
Needs Debian's python3-matplotlib (./dev.sh installs it).
"""

import json
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))


def draw(results, out_png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [name for name in ("horovod", "goyal", "nccl") if results.get(name, {}).get("rows")]
    if not panels:
        raise ValueError("the record holds no source's rows")
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.4), squeeze=False)
    for ax, name in zip(axes[0], panels):
        rows = results[name]["rows"]
        if name == "horovod":
            nets = list(dict.fromkeys(r["net"] for r in rows))
            for k, net in enumerate(nets):
                mine = sorted((r for r in rows if r["net"] == net), key=lambda r: r["gpus"])
                gpus = [r["gpus"] for r in mine]
                ax.plot(gpus, [100 * r["published"] for r in mine], "--", marker="o", mfc="none",
                        color="C%d" % k, label="%s, published" % net)
                ax.plot(gpus, [100 * r["predicted"] for r in mine], "-", marker="o", color="C%d" % k,
                        label="%s, wulf" % net)
            ax.set_xscale("log", base=2)
            ax.set_xticks(sorted({r["gpus"] for r in rows}))
            ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
            ax.set_xlabel("GPUs (servers of 4, 25 GbE RoCE)")
            ax.set_ylabel("scaling efficiency, %")
            ax.set_title("Horovod (Sergeev and Del Balso)")
            ax.legend(fontsize=7)
        elif name == "goyal":
            labels = [r["buckets"] for r in rows]
            ys = range(len(rows))
            ax.barh(list(ys), [100 * r["predicted"] for r in rows], color="C0", label="wulf")
            ax.axvline(100 * rows[0]["published"], color="k", ls="--", label="published (~%.0f%%)"
                       % (100 * rows[0]["published"]))
            ax.set_yticks(list(ys))
            ax.set_yticklabels([textwrap.fill(label, 24) for label in labels], fontsize=7)
            ax.set_xlim(50, 100)
            ax.set_xlabel("scaling efficiency, 8 to 256 GPUs, %")
            ax.set_title("Goyal et al., ResNet-50 on P100")
            ax.legend(fontsize=7, loc="lower left")
        else:
            xs = range(len(rows))
            ax.bar([x - 0.2 for x in xs], [r["busbw_GBps"] for r in rows], width=0.4, color="C0", label="wulf")
            ax.bar([x + 0.2 for x in xs], [r["published_GBps"] for r in rows], width=0.4, color="0.6",
                   label="published")
            ax.set_xticks(list(xs))
            ax.set_xticklabels(["%d NIC%s\n%s" % (r["nics_per_node"], "" if r["nics_per_node"] == 1 else "s",
                                                  r["algorithm"]) for r in rows], fontsize=7)
            ax.set_ylabel("allreduce bus bandwidth, GB/s")
            ax.set_title("nccl-tests' busbw, DGX-1, %d GPUs" % rows[0]["gpus"])
            ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    part = out_png + ".part.png"
    fig.savefig(part, dpi=110)
    plt.close(fig)
    os.replace(part, out_png)


def main():
    record = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results", "published.json")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(record), "published.png")
    try:
        with open(record) as f:
            results = json.load(f)
        draw(results, out)
    except (OSError, ValueError, KeyError) as e:
        sys.exit("plot.py: %s: %s" % (record, e))
    print(out)


if __name__ == "__main__":
    main()
