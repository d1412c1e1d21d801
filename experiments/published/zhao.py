#!/usr/bin/env python3
"""wulf's --strategy fsdp beside PyTorch FSDP's published GPT-175B runs (Zhao et al., "PyTorch
FSDP: Experiences on Scaling Fully Sharded Data Parallel", PVLDB 16(12), 2023, section 5.4;
issue 64 item 6).

The source: minGPT's GPT-175B (vocabulary 50 000, block 2 048: platforms/nets/gpt3_175b.layers)
on A100 80 GB GPUs, 8 a server, the servers on a 2 Tb/s RoCE network; full sharding with
backward prefetch and the rate limiter, activation checkpointing, BF16 mixed precision, Adam;
batch 1 and 2 a GPU on 128 to 512 GPUs: "more than 173 and 186 TFLOPS per GPU with batch size
equal to 1 and 2 respectively ... approximately 55% and 60% of GPU hardware utilization, given
that the A100's peak is 312 TFLOPS using the BF16 tensor core. Furthermore, the model
demonstrated linear scalability from 128 GPUs to 512 GPUs"; and (section 5.2, Figure 6 (b))
backward prefetching "leads to approximately 18% speedup, and this TFLOPS gain persists across
different GPU cluster sizes".

The collectives of a unit go one after another in the order FSDP issues them
(--shard-stream one): PyTorch's ProcessGroupNCCL runs every collective of a process group on
its one NCCL stream, and FSDP's all-gathers and reduce-scatters share a process group; the
prefetch's gain is also given with each collective moving on its own (--shard-stream many).

The platform: generate.py's dgx-a100 (8 A100 on an NVSwitch, 8 NICs a server) with each NIC at
250 Gbit/s, the server's 2 Tb/s over its 8 NICs (the paper gives the network's rate alone). The
shards' collectives go around the servers' 8 rings at once (--shard-algorithm rings), as NCCL's
channels do; --shard-algorithm ring (one ring, one NIC a server) is run beside it.

ONE input, as experiments/published's: the GPU's share of its BF16 peak (wulf:efficiency, the
same for every kind of layer), fitted so that batch 1 makes the source's 173 TFLOPS a GPU.
TFLOPS are hardware flops, as the paper's "hardware utilization" reads: forward, the forward
again (checkpointing) and the backward (twice the forward), 4 x the layer file's forward flops a
sample, over the iteration's training (the record's train_s: without the forward pass that
evaluates the errors for the record, which wulf makes after each update and the paper's runs
do not). The fit: a run at the peak, whose compute (the record's forward and backward phases)
scales with 1 / efficiency while the rest is taken to stay, gives the share; a run at that share
checks it (and, more than 0.5% off, gives the next). Everything else is predicted: batch 2,
backward prefetch off, one ring, the collectives each on its own.

The runs are on 64 GPUs, not the paper's 128 to 512: one iteration of 64 takes under 2 minutes
here, of 128 more than 50 (the messages grow with the square of the GPUs: experiments/fsdp), and 64
is the fewest on which the run fits the devices' 80 GB (65 GiB a GPU). The paper's TFLOPS a GPU
are the same from 128 to 512 (README.md: wulf's change little from 32 to 64). --gpus 128 runs
the same at 128.

    python3 experiments/published/zhao.py [--out DIR] [--work DIR] [--gpus N]    # about 9 minutes on 2 cores
    python3 experiments/published/zhao.py --t5 8,16,32,64,128 [--t5-batch 16]   # T5-11B by GPUs

writes results/zhao.json (every run: command, simulated seconds, TFLOPS, wall seconds) and
prints the table of README.md's section.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WULF = os.path.join(ROOT, "build", "wulf")
GENERATE = os.path.join(ROOT, "platforms", "gpu", "generate.py")
NET = os.path.join(ROOT, "platforms", "nets", "gpt3_175b.layers")
PEAK_TFLOPS = 312.0
SOURCE = {"tflops_b1": 173.0, "tflops_b2": 186.0, "prefetch_gain": 0.18}
GPUS = 64
# NCCL moves the gathers and reductions on its own streams all the time, not only at the
# training loop's progress points: as experiments/published's GPU runs (README.md there), the
# compute is sliced with a progress point between slices, a slice shorter than a ring step:
# 1e10 flops are 37 us at the fitted rate (0.87 x 312 TFLOPS), a ring step of a unit about 230
# us (a lane's 7 MB at a NIC's 31 GB/s). 1e8, published's, would be 3e7 progress points an
# update, past what wulf runs (the option's check).
PROGRESS_FLOPS = "1e10"


def forward_flops(net=NET):
    with open(net) as f:
        for line in f:
            if line.startswith("# forward flops per sample:"):
                return float(line.split(":")[1])
    raise SystemExit("zhao.py: no forward flop count in " + net)


def platform(tmp, efficiency, gpus=None):
    gpus = gpus or GPUS
    path = os.path.join(tmp, "zhao-%d-e%s.xml" % (gpus // 8, efficiency))
    if os.path.exists(path):
        return path
    cmd = [sys.executable, GENERATE, "--preset", "dgx-a100", "--nodes", str(gpus // 8), "--nic-gbit", "250",
           "-o", path]
    if efficiency is not None:
        cmd += ["--efficiency", "other=%s" % efficiency]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return path


def train(tmp, tag, plat, batch, extra=(), net=NET, gpus=None):
    gpus = gpus or GPUS
    out = os.path.join(tmp, "%s-%d.json" % (tag, gpus))
    cmd = [WULF, "train", "--quiet", "--problem", "layers:" + net, "--numerics", "off", "--engine", "sim",
           "--platform", plat, "--np", str(gpus), "--train-size", str(gpus * batch), "--block", str(gpus * batch),
           "--test-size", "0", "--epochs", "1", "--strategy", "fsdp", "--precision", "bf16", "--recompute", "on",
           "--learning", "adam", "--shard-progress-flops", PROGRESS_FLOPS, "--out", out] + list(extra)
    if "--shard-algorithm" not in extra:
        cmd += ["--shard-algorithm", "rings"]
    if "--shard-stream" not in extra:
        cmd += ["--shard-stream", "one"]
    start = time.time()
    if not os.path.exists(out):  # a record of --work's is kept (the same command, the same run)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.time() - start
    with open(out) as f:
        rec = json.load(f)
    last = rec["history"][-1]
    # The iteration's training (train_s): its time without the pass that evaluates the errors
    # for the record, which wulf charges after the update and the paper's runs do not make.
    seconds = last["train_s"]
    compute = rec["phases"]["forward_s"] + rec["phases"]["backward_s"]
    return {"tag": tag, "gpus": gpus, "seconds": seconds, "compute_s": compute,
            "tflops": 4 * forward_flops(net) * batch / seconds / 1e12,
            "gather_wait_s": last.get("gather_wait_s"), "reduce_wait_s": last.get("reduce_wait_s"),
            "device_gib": rec["config"]["device_memory"]["per_rank_bytes"] / 2**30, "wall_s": round(wall, 1),
            "command": " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd)}


T5 = os.path.join(ROOT, "platforms", "nets", "t5_11b.layers")


def t5_drop(tmp, out, efficiency, gpus_list, batch=8):
    """T5-11B's TFLOPS a GPU from the fewest GPUs to the most (the source: a 7% drop from 8 to
    512, sequence 512, batch 8 and 16), at the share of the peak GPT-175B's fit found: the same
    GPUs, the same settings."""
    runs = [train(tmp, "t5", platform(tmp, "%.4g" % efficiency, g), batch, net=T5, gpus=g) for g in gpus_list]
    first = runs[0]
    table = ["| T5-11B, batch %d a GPU | TFLOPS a GPU | against %d GPUs | gather wait | simulated in |" % (
        batch, first["gpus"]), "|---|---|---|---|---|"]
    for r in runs:
        table.append("| %d GPUs | %.1f | %+.1f%% | %.3f s | %.0f s |" % (
            r["gpus"], r["tflops"], 100 * (r["tflops"] / first["tflops"] - 1), r["gather_wait_s"], r["wall_s"]))
    print("\n".join(table))
    with open(os.path.join(out, "zhao-t5-b%d-%s.json" % (batch, "-".join(map(str, gpus_list)))), "w") as f:
        json.dump({"source_drop_8_to_512": 0.07, "efficiency": efficiency, "batch": batch, "runs": runs,
                   "table": table}, f, indent=1)
        f.write("\n")


def main():
    global GPUS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--work", help="folder of the platforms and records (default: a new temporary one); a "
                    "record already there is read, not run again")
    ap.add_argument("--gpus", type=int, default=GPUS, help="GPUs, 8 a server (default %(default)s)")
    ap.add_argument("--start", type=float, default=1.0,
                    help="the efficiency the fit starts from (default 1, the peak; a run at the peak says where "
                         "to start, saving a run of minutes)")
    ap.add_argument("--t5-batch", type=int, default=8, help="--t5's sequences a GPU (default %(default)s; the "
                    "source's runs had 8 and 16)")
    ap.add_argument("--t5", metavar="GPUS,...",
                    help="only T5-11B's TFLOPS a GPU at these GPU counts (8 a server), at the share of the peak "
                         "that results/zhao.json's fit found: results/zhao-t5-bBATCH-GPUS.json")
    a = ap.parse_args()
    GPUS = a.gpus
    os.makedirs(a.out, exist_ok=True)
    tmp = a.work or tempfile.mkdtemp(prefix="wulf-zhao-")
    os.makedirs(tmp, exist_ok=True)
    if a.t5:
        try:
            gpus_list = [int(g) for g in a.t5.split(",")]
        except ValueError:
            sys.exit("--t5 %s: expected GPU counts, comma-separated" % a.t5)
        if any(g < 8 or g % 8 for g in gpus_list):
            sys.exit("--t5 %s: each a multiple of 8 (whole DGX A100 servers)" % a.t5)
        with open(os.path.join(a.out, "zhao.json")) as f:
            efficiency = json.load(f)["efficiency"]
        return t5_drop(tmp, a.out, efficiency, gpus_list, a.t5_batch)
    runs = []
    # The fit: at the peak, then the share whose compute, with the rest as it was, makes the
    # source's time; checked by a run at it.
    target_s = 4 * forward_flops() / (SOURCE["tflops_b1"] * 1e12)
    efficiency = a.start
    for step in range(3):
        r = train(tmp, "fit-%d" % step, platform(tmp, "%.4g" % efficiency), 1)
        r["efficiency"] = efficiency
        runs.append(r)
        print("fit %d: efficiency %.4g: %.3f s, %.1f TFLOPS a GPU" % (step, efficiency, r["seconds"], r["tflops"]),
              flush=True)
        if abs(r["seconds"] / target_s - 1) < 0.005:
            break
        efficiency = float("%.4g" % (efficiency * r["compute_s"] / (target_s - (r["seconds"] - r["compute_s"]))))
    plat = platform(tmp, "%.4g" % runs[-1]["efficiency"])
    b1 = runs[-1]
    b2 = train(tmp, "batch-2", plat, 2)
    off = train(tmp, "prefetch-off", plat, 1, ["--backward-prefetch", "off"])
    one = train(tmp, "one-ring", plat, 1, ["--shard-algorithm", "ring"])
    # The same prefetch on and off with each collective moving on its own (--shard-stream many).
    many_on = train(tmp, "streams", plat, 1, ["--shard-stream", "many"])
    many_off = train(tmp, "streams-prefetch-off", plat, 1, ["--shard-stream", "many", "--backward-prefetch", "off"])
    runs += [b2, off, one, many_on, many_off]
    gain = off["seconds"] / b1["seconds"] - 1
    gain_many = many_off["seconds"] / many_on["seconds"] - 1
    rows = [
        ("TFLOPS a GPU, batch 1 (the input)", "173", "%.1f" % b1["tflops"], ""),
        ("TFLOPS a GPU, batch 2", "186", "%.1f" % b2["tflops"], "%+.1f%%" % (100 * (b2["tflops"] / 186 - 1))),
        ("share of the BF16 peak, batch 1 / 2", "55% / 60%", "%.1f%% / %.1f%%" % (
            100 * b1["tflops"] / PEAK_TFLOPS, 100 * b2["tflops"] / PEAK_TFLOPS), ""),
        ("backward prefetch's gain (time without / with - 1)", "about 18%", "%.1f%%" % (100 * gain),
         "%+.1f points" % (100 * gain - 18)),
        ("the same, each collective moving on its own (--shard-stream many)", "-", "%.1f%%" % (100 * gain_many), ""),
        ("one ring instead of 8: TFLOPS a GPU, batch 1", "-", "%.1f" % one["tflops"], ""),
    ]
    table = ["| %d GPUs | Zhao et al. | wulf | wulf against the source |" % GPUS, "|---|---|---|---|"]
    table += ["| %s | %s | %s | %s |" % r for r in rows]
    print("\n".join(table))
    print("fitted efficiency %.4g of 312 TFLOPS; device memory a GPU %.1f GiB (batch 1), %.1f GiB (batch 2)"
          % (b1["efficiency"], b1["device_gib"], b2["device_gib"]))
    with open(os.path.join(a.out, "zhao.json"), "w") as f:
        json.dump({"source": SOURCE, "gpus": GPUS, "efficiency": b1["efficiency"], "prefetch_gain": gain,
                   "prefetch_gain_streams_many": gain_many,
                   "runs": runs, "table": table}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
