#!/usr/bin/env python3
"""wulf's model against its simulation (issue 65 item 2): the same cells, side by side.

Each cell is a net (a layer file of platforms/nets), a platform (a shipped one, or one of
platforms/gpu/generate.py's presets with more servers), a GPU count, a strategy, an allreduce
and a bucket size. For each, `wulf train --engine sim --numerics off` and `wulf model --overlap`
run with the same options; the table gives the time per iteration of both and the model's
difference. Nothing is fitted: the model reads the platform and the net as the simulation does.

    python3 experiments/model-check/check.py                 # the grid (see GRID below)
    python3 experiments/model-check/check.py --quick         # a few cells
    python3 experiments/model-check/check.py --out DIR       # results elsewhere than results/

Writes DIR/check.json (every cell: both times, the difference, the commands, wall seconds) and
DIR/table.md; plot.py draws DIR/check.png.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WULF = os.environ.get("WULF", os.path.join(ROOT, "build", "wulf"))
GENERATE = os.path.join(ROOT, "platforms", "gpu", "generate.py")

MIB25 = 25 * 1024 * 1024
WHOLE = 1 << 40  # more than any net: one bucket
ALGORITHMS = ["ring", "rdb", "rabenseifner", "hierarchical", "hierarchical-rabenseifner", "rings"]
# Per GPU, the batch each net trains with here (the sources' of experiments/published where
# they give one).
BATCH = {"resnet50": 32, "vgg16": 32, "bert_large": 8, "gpt2": 8}
# GPUs a server of each preset.
PER_SERVER = {"dgx1-v100": 8, "roce-4gpu": 4, "eth10g-4gpu": 4}
SHIPPED_SERVERS = {"dgx1-v100": 8, "roce-4gpu": 128, "eth10g-4gpu": 8}


def grid(quick, nets):
    if quick:
        return [("resnet50", "dgx1-v100", 16, a, bucket) for a in ("ring", "hierarchical", "rings")
                for bucket in (0, MIB25)]
    cells = []
    for net in nets:
        for preset, gpus in (("dgx1-v100", (8, 64)), ("roce-4gpu", (16, 128)), ("eth10g-4gpu", (8, 32))):
            for p in gpus:
                for a in ALGORITHMS:
                    for bucket in (0, MIB25, WHOLE):
                        cells.append((net, preset, p, a, bucket))
    return cells


def platform_for(tmp, preset, p):
    servers = -(-p // PER_SERVER[preset])
    if servers <= SHIPPED_SERVERS[preset]:
        return os.path.join(ROOT, "platforms", preset + ".xml")
    path = os.path.join(tmp, "%s-%d.xml" % (preset, servers))
    if not os.path.exists(path):
        subprocess.run([sys.executable, GENERATE, "--preset", preset, "--nodes", str(servers), "-o", path], check=True)
    return path


def common(net, plat, p, bucket, a):
    batch = BATCH[net] * p
    return ["--platform", plat, "--problem", "layers:" + net, "--np", str(p), "--block", str(batch),
            "--train-size", str(batch), "--test-size", "1", "--bucket-bytes", str(bucket), "--bucket-allreduce", a]


def run_cell(tmp, cell):
    net, preset, p, a, bucket = cell
    plat = platform_for(tmp, preset, p)
    name = "%s-%s-%d-%s-%d" % (net, preset, p, a, bucket)
    sim_out, model_out = os.path.join(tmp, name + ".sim.json"), os.path.join(tmp, name + ".model.json")
    args = common(net, plat, p, bucket, a)
    sim = [WULF, "train", "--quiet", "--engine", "sim", "--numerics", "off", "--strategy", "overlap", "--epochs", "3",
           "--out", sim_out] + args
    model = [WULF, "model", "--overlap", "--out", model_out] + args
    t0 = time.time()
    r = subprocess.run(sim, capture_output=True, text=True)
    sim_wall = time.time() - t0
    if r.returncode != 0:
        return {"cell": name, "error": "sim: " + r.stderr.strip()[-400:]}
    t0 = time.time()
    m = subprocess.run(model, capture_output=True, text=True)
    model_wall = time.time() - t0
    if m.returncode != 0:
        return {"cell": name, "error": "model: " + m.stderr.strip()[-400:]}
    hist = json.load(open(sim_out))["history"]
    sim_s = (hist[-1]["time_s"] - hist[1]["time_s"]) / (len(hist) - 2)
    model_s = json.load(open(model_out))["grid"][0]["time_s"]
    return {"cell": name, "net": net, "platform": preset, "gpus": p, "algorithm": a, "bucket_bytes": bucket,
            "sim_s": sim_s, "model_s": model_s, "difference": model_s / sim_s - 1,
            "sim_wall_s": sim_wall, "model_wall_s": model_wall,
            "sim_command": " ".join(sim), "model_command": " ".join(model)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--nets", default="resnet50,vgg16,bert_large,gpt2", help="the nets, a comma-separated list")
    opts = ap.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    cells = grid(opts.quick, opts.nets.split(","))
    with tempfile.TemporaryDirectory(prefix="wulf-model-check-") as tmp:
        # The generated platforms first, once each.
        for cell in cells:
            platform_for(tmp, cell[1], cell[2])
        with concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
            rows = list(pool.map(lambda c: run_cell(tmp, c), cells))
    lines = ["| net | platform | GPUs | allreduce | bucket | sim s | model s | model - sim |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append("| %s | error: %s |" % (r["cell"], r["error"].replace("\n", " ")))
            continue
        bucket = {0: "tensor", MIB25: "25 MiB", WHOLE: "net"}.get(r["bucket_bytes"], str(r["bucket_bytes"]))
        lines.append("| %s | %s | %d | %s | %s | %.5f | %.5f | %+.1f%% |" % (
            r["net"], r["platform"], r["gpus"], r["algorithm"], bucket, r["sim_s"], r["model_s"], 100 * r["difference"]))
    ok = [r for r in rows if "error" not in r]
    within = sum(abs(r["difference"]) <= 0.05 for r in ok)
    summary = "%d of %d cells within 5%%; %d failed" % (within, len(rows), len(rows) - len(ok))
    text = "\n".join(lines) + "\n\n" + summary + "\n"
    print(text)
    with open(os.path.join(opts.out, "table.md"), "w") as f:
        f.write(text)
    with open(os.path.join(opts.out, "check.json"), "w") as f:
        json.dump({"cells": rows, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    main()
