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
    python3 experiments/model-check/check.py --table A.json B.json --write   # records merged into results/

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
# fsdp's variants: (sharding, shard algorithm, stream, backward prefetch).
FSDP = [("full", "ring", "many", "on"), ("full", "rings", "one", "on"), ("full", "ring", "one", "off"),
        ("grad-op", "ring", "many", "on"), ("hybrid", "ring", "many", "on")]
FSDP_NETS = {"llama2_7b": (16, 64), "gpt3_175b": (64,)}  # the GPUs of each (fewer do not hold GPT-3 175B)
ALGORITHMS = ["ring", "rdb", "rabenseifner", "hierarchical", "hierarchical-rabenseifner", "rings"]
# Per GPU, the batch each net trains with here (the sources' of experiments/published where
# they give one).
# --test-size: 1 sample of the test set, or none where the layer file has no test set (the check
# pass then runs over the training set, in both).
TEST_SIZE = {"bert_large": "0"}
BATCH = {"resnet50": 32, "vgg16": 32, "bert_large": 8, "gpt2": 8, "llama2_7b": 1, "gpt3_175b": 1}
# GPUs a server of each preset.
PER_SERVER = {"dgx1-v100": 8, "roce-4gpu": 4, "eth10g-4gpu": 4, "dgx-a100": 8, "dgx-h100": 8}
SHIPPED_SERVERS = {"dgx1-v100": 8, "roce-4gpu": 128, "eth10g-4gpu": 8, "dgx-a100": 8, "dgx-h100": 8}


def grid(quick, nets, fsdp_nets, large=False):
    """Cells: (net, platform preset, GPUs, variant); a variant is ("overlap", allreduce, bucket
    bytes) or ("fsdp", sharding, shard algorithm, stream, backward prefetch). large: the
    generated sizes instead, 1 024 GPUs of 128 DGX-1 and of 256 RoCE servers, 25 MiB buckets and
    the whole net (a bucket per tensor takes the simulation longer than an hour there)."""
    if large:
        return [(net, preset, 1024, ("overlap", a, bucket)) for net in nets for preset in ("dgx1-v100", "roce-4gpu")
                for a in ALGORITHMS for bucket in (MIB25, WHOLE)]
    if quick:
        return ([("resnet50", "dgx1-v100", 16, ("overlap", a, bucket)) for a in ("ring", "hierarchical", "rings")
                 for bucket in (0, MIB25)] +
                [("llama2_7b", "dgx-a100", 16, ("fsdp",) + v) for v in FSDP[:2]])
    cells = []
    for net in nets:
        for preset, gpus in (("dgx1-v100", (8, 64)), ("roce-4gpu", (16, 128)), ("eth10g-4gpu", (8, 32))):
            for p in gpus:
                for a in ALGORITHMS:
                    for bucket in (0, MIB25, WHOLE):
                        cells.append((net, preset, p, ("overlap", a, bucket)))
    for net in fsdp_nets:
        for preset in ("dgx-a100", "dgx-h100"):
            for p in FSDP_NETS[net]:
                for v in FSDP:
                    cells.append((net, preset, p, ("fsdp",) + v))
    return cells


def platform_for(tmp, preset, p):
    servers = -(-p // PER_SERVER[preset])
    if servers <= SHIPPED_SERVERS[preset]:
        return os.path.join(ROOT, "platforms", preset + ".xml")
    path = os.path.join(tmp, "%s-%d.xml" % (preset, servers))
    if not os.path.exists(path):
        subprocess.run([sys.executable, GENERATE, "--preset", preset, "--nodes", str(servers), "-o", path], check=True)
    return path


def variant_args(variant):
    if variant[0] == "overlap":
        return ["--bucket-bytes", str(variant[2]), "--bucket-allreduce", variant[1]]
    _, sharding, algorithm, stream, prefetch = variant
    # Activations recomputed, as Zhao et al. trained: GPT-3 175B's of one sample are 297 GiB.
    return ["--strategy", "fsdp", "--sharding", sharding, "--shard-algorithm", algorithm, "--shard-stream", stream,
            "--backward-prefetch", prefetch, "--precision", "bf16", "--learning", "adam", "--recompute", "on"]


def variant_name(variant):
    if variant[0] == "overlap":
        return "overlap %s %s" % (variant[1], {0: "tensor", MIB25: "25MiB", WHOLE: "net"}[variant[2]])
    return "fsdp %s %s %s-stream prefetch-%s" % variant[1:]


def run_cell(tmp, cell, timeout):
    net, preset, p, variant = cell
    plat = platform_for(tmp, preset, p)
    name = "%s-%s-%d-%s" % (net, preset, p, variant_name(variant).replace(" ", "-"))
    sim_out, model_out = os.path.join(tmp, name + ".sim.json"), os.path.join(tmp, name + ".model.json")
    batch = BATCH[net] * p
    args = ["--platform", plat, "--problem", "layers:" + net, "--np", str(p), "--block", str(batch),
            "--train-size", str(batch), "--test-size", TEST_SIZE.get(net, "1")] + variant_args(variant)
    sim = [WULF, "train", "--quiet", "--engine", "sim", "--numerics", "off", "--epochs", "3", "--timeout",
           str(timeout), "--out", sim_out] + (["--strategy", "overlap"] if variant[0] == "overlap" else []) + args
    model = [WULF, "model", "--out", model_out] + (["--overlap"] if variant[0] == "overlap" else []) + args
    row = {"cell": name, "net": net, "platform": preset, "gpus": p, "variant": variant_name(variant),
           "sim_command": " ".join(sim), "model_command": " ".join(model)}
    t0 = time.time()
    m = subprocess.run(model, capture_output=True, text=True)
    row["model_wall_s"] = time.time() - t0
    if m.returncode != 0:
        return dict(row, error="model: " + m.stderr.strip()[-400:])
    cell = json.load(open(model_out))["grid"][0]
    row["model_s"] = cell["time_s"]
    row["model_fits_device"] = cell.get("fits_device", True)
    t0 = time.time()
    r = subprocess.run(sim, capture_output=True, text=True)
    row["sim_wall_s"] = time.time() - t0
    if r.returncode != 0:
        why = ("the simulation did not finish in %d s" % timeout if row["sim_wall_s"] >= timeout
               else r.stderr.strip().split("\n")[0][:300])
        return dict(row, error="sim: " + why)
    hist = json.load(open(sim_out))["history"]
    row["sim_s"] = (hist[-1]["time_s"] - hist[1]["time_s"]) / (len(hist) - 2)
    row["difference"] = row["model_s"] / row["sim_s"] - 1
    return row


def save(folder, rows, text):
    """check.json and table.md in folder, each written whole."""
    os.makedirs(folder, exist_ok=True)
    for name, content in (("table.md", text),
                          ("check.json", json.dumps({"cells": rows, "summary": text.strip().split("\n")[-1]}, indent=1))):
        tmp = os.path.join(folder, "." + name + ".tmp")
        with open(tmp, "w") as f:
            f.write(content)
        os.replace(tmp, os.path.join(folder, name))


def render(rows):
    """The table of the cells and its summary line."""
    lines = ["| net | platform | GPUs | variant | sim s | model s | model - sim |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        model = "%.5f" % r["model_s"] if "model_s" in r else ""
        if "model_s" in r and not r.get("model_fits_device", True):
            model += " (does not fit)"
        if "error" in r:
            lines.append("| %s | %s | %d | %s | %s | %s | |" % (r["net"], r["platform"], r["gpus"], r["variant"],
                                                              r["error"].replace("\n", " ").replace("|", "/"), model))
            continue
        lines.append("| %s | %s | %d | %s | %.5f | %s | %+.1f%% |" % (
            r["net"], r["platform"], r["gpus"], r["variant"], r["sim_s"], model, 100 * r["difference"]))
    ok = [r for r in rows if "error" not in r]
    within = sum(abs(r["difference"]) <= 0.05 for r in ok)
    slow = sum("did not finish" in r.get("error", "") for r in rows)
    summary = ("%d of %d cells within 5%%, %d outside; not compared: %d simulations that did not finish in time, %d "
               "the simulation refused" % (within, len(rows), len(ok) - within, slow, len(rows) - len(ok) - slow))
    return "\n".join(lines) + "\n\n" + summary + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--large", action="store_true", help="the generated sizes (1 024 GPUs) of --nets instead")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--nets", default="resnet50,vgg16,bert_large,gpt2", help="overlap's nets, a comma-separated list")
    ap.add_argument("--fsdp-nets", default=",".join(FSDP_NETS), help="fsdp's nets, a comma-separated list ('' none)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds a simulation may take")
    ap.add_argument("--table", metavar="CHECK_JSON", nargs="+",
                    help="only print the table of records this script wrote, their cells one after another")
    ap.add_argument("--write", action="store_true", help="with --table: write them as one record and table to --out")
    opts = ap.parse_args()
    if opts.table:
        rows = [c for path in opts.table for c in json.load(open(path))["cells"]]
        text = render(rows)
        print(text)
        if opts.write:
            save(opts.out, rows, text)
        return
    os.makedirs(opts.out, exist_ok=True)
    cells = grid(opts.quick, [n for n in opts.nets.split(",") if n], [n for n in opts.fsdp_nets.split(",") if n],
                 opts.large)
    with tempfile.TemporaryDirectory(prefix="wulf-model-check-") as tmp:
        # The generated platforms first, once each.
        for cell in cells:
            platform_for(tmp, cell[1], cell[2])
        with concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
            rows = list(pool.map(lambda c: run_cell(tmp, c, opts.timeout), cells))
    text = render(rows)
    print(text)
    save(opts.out, rows, text)


if __name__ == "__main__":
    main()
