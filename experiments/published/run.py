#!/usr/bin/env python3
"""wulf's predictions beside published measurements (issue 34 item 3).

Each case takes ONE number from its source as an input, the time of one GPU, and predicts
everything about scaling by simulation (wulf train --engine sim --numerics off on a platform
of platforms/gpu/generate.py):

  1. The GPU's share of its peak: one GPU is simulated at its peak rate, and the efficiency
     that makes its time the source's is written into the platform (wulf:efficiency, the
     same share for every kind of layer). That is the only number fitted, and it is fitted
     to the one-GPU input, never to a figure being predicted.
  2. The one-GPU run is simulated again on that platform: its time must be the source's.
  3. N GPUs are simulated; the predicted scaling efficiency is the one-GPU time over the
     N-GPU time per update (each GPU holds the same samples: weak scaling, as the sources).

The bus bandwidths (nccl-tests) are `wulf platform bench` allreduce times turned into
nccl-tests' busbw = S / t x 2 (n - 1) / n.

    python3 experiments/published/run.py [--only horovod|goyal|nccl] [--quick]

writes experiments/published/results/published.json (every figure, the commands, the wall
seconds of each simulation), results/tables.md (the tables of README.md) and
results/published.png (plot.py's drawing of them), and prints the tables. --quick leaves out
the 512-GPU runs (about 3 minutes of the 6 on a 2-core machine). Needs wulf built
(./dev.sh build).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WULF = os.path.join(ROOT, "build", "wulf")
GENERATE = os.path.join(ROOT, "platforms", "gpu", "generate.py")

# Horovod: its README of 2017-09-05 (horovod commit d54e3a88, "Update README (#19)"),
# "Baseline single-GPU (batch size=64)" on its "4 servers with 4 Pascal GPUs each connected by
# RoCE-capable 25 Gbit/s network": images per second, tf_cnn_benchmarks, synthetic data.
# Efficiencies: README/docs at cd2a3ce8 (128 GPUs) and 8318a898 (512 GPUs); the 16-GPU row is
# that README's "RDMA Horovod (allreduce on GPU with NCCL)" over 16 x the baseline (SOURCES.md 1c).
HOROVOD = {
    "source": "Sergeev and Del Balso, Horovod (arXiv:1802.05799); horovod README/docs (SOURCES.md section 1)",
    "batch_per_gpu": 64,
    "bucket_bytes": 64 * 1024 * 1024,  # Horovod's tensor fusion buffer of the time, 64 MB
    # One fused allreduce at a time: the paper's tensor fusion (section "Tensor Fusion") fills
    # the buffer with ready tensors, runs the allreduce on it, copies out, and repeats until no
    # tensor is left in the cycle, all on Horovod's one background thread (NCCL on one stream).
    "bucket_concurrency": 1,
    # The loop's cycle: it sleeps 5 ms between rounds (a tick gathers the tensors ready on every
    # rank, fuses them and performs them), HOROVOD_CYCLE_TIME's default (docs/tensor-fusion.md;
    # horovod/common/operations.cc at 8318a898, read in issue 34's stop 52): overlap's
    # --bucket-cycle. Under --bucket-fusion tick (below) a negotiation with rank 0 is sent each tick.
    "bucket_cycle_s": 0.005,
    # Tensor fusion as the loop ran it (horovod/tensorflow/mpi_ops.cc, BackgroundThreadLoop, at
    # 7b5ff812, 2018-02): at each tick rank 0 learns from every rank which tensors it has ready,
    # and fuses those every rank has, in order, into responses of at most the fusion threshold,
    # each one allreduce: --bucket-fusion tick, which sends the negotiation's messages too.
    "bucket_fusion": "tick",
    # When a rank asks rank 0 for a tensor: when TensorFlow schedules its op, ahead of the GPU
    # (tf_cnn_benchmarks runs TensorFlow; the op's ComputeAsync enqueues the request at once
    # with a ready event, and the loop waits for every tensor's event of a response before it
    # performs it: WAIT_FOR_DATA, "TensorFlow tries to smartly interleave scheduling and GPU
    # computation", docs/timeline.md at 8318a898): --bucket-request scheduled. Until
    # 2026-11-29's evening the requests went when the GPU had made each tensor (computed).
    "bucket_request": "scheduled",
    "nets": {
        "inception_v3": {"label": "Inception V3", "one_gpu_images_s": 134.4,
                         "published": {16: 2022.6 / (16 * 134.4), 128: 0.90, 512: 0.90}},
        "resnet101": {"label": "ResNet-101", "one_gpu_images_s": 119.4,
                      "published": {16: 1746.2 / (16 * 119.4), 128: 0.90, 512: 0.90}},
        "vgg16": {"label": "VGG-16", "one_gpu_images_s": 130.9,
                  "published": {16: 1787.4 / (16 * 130.9), 128: 0.79, 512: 0.68}},
    },
}

# Goyal et al. (arXiv:1706.02677 v2): section 4.3 "Backprop for ResNet-50 on a single NVIDIA
# Tesla P100 GPU takes 120 ms" (n = 32 images a GPU, section 5.1); about 90% scaling
# efficiency from 8 GPUs (one Big Basin server) to 256 (32 servers), abstract and section 5.5.
GOYAL = {
    "source": "Goyal et al., Accurate, Large Minibatch SGD (arXiv:1706.02677 v2), sections 4.1, 4.3, 5.1, 5.5",
    "batch_per_gpu": 32,
    "one_gpu_backward_s": 0.120,
    "published": 0.90,
    "gpus": [8, 256],
}

# What PyTorch DDP costs on a GPU beside its compute (--framework ddp --ddp-backend nccl: the
# hosts' wulf:ddp), each from a published measurement (SOURCES.md section 5), never from the
# figures predicted here: its copies into and out of the buckets and its division at half the
# GPU's published device-to-device copy rate (bandwidthTest counts the read and the write), a
# short kernel on the compute stream per gradient (NVIDIA's CUDA Graphs blog, 3.8 us), and
# NCCL's own tuning model's per-call latency (Ring/Simple baseLat, 8.4 us) per bucket. DDP's
# per-iteration work runs on the CPU ahead of the GPU, and no published figure of NCCL's
# kernels slowing the compute was found: neither is charged.
GPU_DDP = {
    "P100-SXM2": "copy=2.56e11,copy_out=2.56e11,scale=2.56e11,tensor=3.8e-6,bucket=8.4e-6",
}

# NCCL's maintainer on DGX-1 nodes (SOURCES.md section 4b): busbw of large allreduces.
NCCL = {
    "source": "NVIDIA/nccl issue #307 and NVIDIA/nccl-tests issue #29 (S. Jeaugey); busbw as nccl-tests "
              "doc/PERFORMANCE.md defines it",
    "rows": [
        # (label, nodes, nics per node, published GB/s, what was said)
        ("DGX-1 V100, 1 EDR NIC per node, 4 nodes", 4, 1, 12.2,
         "12.2 GB/s (for a 100Gbps card) is as good as you can get (4 servers x 8 V100, one NIC each)"),
        ("DGX-1, 4 EDR NICs per node, more than 2 nodes (rings)", 4, 4, 47.0,
         "I always get 47 GB/s on DGX-1 nodes (except with 2 nodes / trees)"),
    ],
    "bytes": 64 << 20,  # 64 MiB: a "large message", where nccl-tests' busbw has flattened
}


# NCCL (Horovod) and Gloo (Goyal et al.) move the buckets from threads and streams of their
# own, while the GPU computes: the communication progresses all the time, not only where the
# training loop calls MPI_Test. wulf's overlap charges each layer's backward in slices of at
# most 10^8 flops (about 8 us on VGG-16's GPU) with a progress point between them (a point
# after each layer only, the default, models one thread that does both: see README.md). A
# slice must be shorter than a ring step, or the slices, not the network, pace the rings: a
# step at 512 GPUs is about 45 us (64 MiB / 512 at 3.125 GB/s, plus latency). With 10^9 (82 us
# on VGG-16's GPU) VGG-16 gave 62.8% at 512 GPUs, with 10^8 80.2%; with 10^7 it moves by under
# a point more at 16 and 128 GPUs (README.md, "The slices' size, again"). Inception V3,
# ResNet-101 and ResNet-50, whose communication hides, move by at most half a point.
PROGRESS = ["--progress-flops", "1e8"]
# run.py's --bucket-concurrency, when given: overlap's --bucket-concurrency for every case, in
# place of Horovod's own (1) and Goyal et al.'s (as many as are ready: Caffe2 starts each
# layer's Gloo allreduce as soon as its gradient is made, section 4.3).
CONCURRENCY = [None]
# run.py's --bucket-cycle, when given: Horovod's --bucket-cycle in place of its own 0.005 s.
CYCLE = [None]


# run.py's --bucket-fusion, when given: Horovod's in place of its own tick.
FUSION = [None]
# run.py's --bucket-request, when given: Horovod's in place of its own scheduled.
REQUEST = [None]
# run.py's --what-if, when given: generate.py options (["--nic-lat-us", "5", ...]) for every
# platform of more than one server; the one-GPU calibration has no network and stays as it is.
WHAT_IF = []
# run.py's --net, when given: the Horovod nets to run (HOROVOD["nets"] keys).
NETS = []


def concurrency(own):
    return ["--bucket-concurrency", str(own if CONCURRENCY[0] is None else CONCURRENCY[0])]

# The presets' datasheet peaks (platforms/gpu/generate.py), TFLOP/s FP32.
PEAK_TFLOPS = {"roce-4gpu": 9.3, "bigbasin-p100": 10.6}


def run(cmd, what):
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("%s failed (%d): %s\n%s" % (what, p.returncode, " ".join(cmd), p.stderr[-3000:]))
    return wall


def platform(tmp, preset, nodes, efficiency=None, extra=(), ddp=None):
    name = "%s-%d%s%s%s.xml" % (preset, nodes, "" if efficiency is None else "-e%s" % efficiency, "-".join(extra),
                                "" if ddp is None else "-ddp")
    path = os.path.join(tmp, name)
    cmd = [sys.executable, GENERATE, "--preset", preset, "--nodes", str(nodes), "-o", path] + list(extra)
    if efficiency is not None:
        cmd += ["--efficiency", "other=%s" % efficiency]
    if ddp is not None:
        cmd += ["--ddp", ddp]
    run(cmd, "generate.py")
    return path


def ring_hosts(tmp, prefix, nodes):
    """A --hosts file: each Big Basin server's GPUs in the order of a ring over its NVLinks
    (0 1 2 3 7 6 5 4: every hop one NVLink), the order NCCL's ring search finds, so that
    the rings within a server in rank order use direct NVLinks."""
    path = os.path.join(tmp, "%s-%d.hosts" % (prefix, nodes))
    with open(path, "w") as f:
        for n in range(nodes):
            for g in (0, 1, 2, 3, 7, 6, 5, 4):
                f.write("%s-%d-gpu%d\n" % (prefix, n, g))
    return path


def train(tmp, tag, net, plat, np_, batch, strategy_args, hosts=None, updates=1):
    """The last of `updates` simulated updates of batch samples a GPU on np_ GPUs (seconds a
    update, record). PyTorch DDP's first update is not its others (one bucket of every
    gradient; then the buckets are rebuilt), so its runs take 2 and time the second."""
    out = os.path.join(tmp, tag + ".json")
    cmd = [WULF, "train", "--quiet", "--problem", "layers:" + net, "--numerics", "off", "--engine", "sim",
           "--platform", plat, "--np", str(np_), "--train-size", str(np_ * batch), "--block", str(np_ * batch),
           "--test-size", "1", "--epochs", str(updates), "--out", out] + strategy_args
    if hosts:
        cmd += ["--hosts", hosts]
    wall = run(cmd, "wulf train " + tag)
    with open(out) as f:
        rec = json.load(f)
    last = rec["history"][-1]
    before = rec["history"][-2]["time_s"] if len(rec["history"]) > 1 else 0.0  # the clock runs over all updates
    phases = rec.get("phases", {})
    return {
        "update_s": last["time_s"] - before,
        "first_update_s": rec["history"][1]["time_s"] if updates > 1 else None,
        "exposed_comm_s": last.get("exposed_comm_s"),
        "buckets": last.get("buckets"),
        "phases": phases,
        "wall_s": round(wall, 2),
        "command": " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd),
    }


def calibrate(tmp, tag, net, preset, batch, target_s, strategy_args, measure="update_s"):
    """The share of the peak that makes one GPU take target_s (its update, or its backward
    pass), and the one-GPU run on the platform with it."""
    peak = train(tmp, tag + "-peak", net, platform(tmp, preset, 1), 1, batch, strategy_args)
    peak_s = peak["update_s"] if measure == "update_s" else backward_s(peak)
    eff = float("%.4g" % (peak_s / target_s))
    extra = []
    if eff > 1:
        # Faster than the peak by the layers' flop count: cuDNN's Winograd and FFT convolutions
        # do fewer multiplications than a direct convolution (VGG-16's 3x3 layers most), so the
        # one-GPU time holds fewer flops than the count. The GPU is then given the effective
        # rate the input implies, and the share 1; the record says so.
        extra = ["--gpu-tflops", "%.4g" % (PEAK_TFLOPS[preset] * eff)]
        eff = 1.0
    one = train(tmp, tag + "-1", net, platform(tmp, preset, 1, eff, extra), 1, batch, strategy_args)
    one["effective_tflops"] = float(extra[1]) if extra else None
    return eff, peak_s, one


def what_if(nodes):
    """--what-if's generate.py options for a platform of that many servers (none for one)."""
    return list(WHAT_IF) if nodes > 1 else []


def backward_s(r):
    """The backward pass's seconds in a one-GPU record's phases (rank 0's)."""
    return r["phases"]["backward_s"]


def horovod(tmp, quick):
    h = HOROVOD
    rows = []
    cycle = h["bucket_cycle_s"] if CYCLE[0] is None else float(CYCLE[0])
    fusion = h["bucket_fusion"] if FUSION[0] is None else FUSION[0]
    if fusion == "tick" and cycle == 0:
        fusion = "cut"  # ticks need the loop's cycle; without it a ready bucket starts at once
    request = (h["bucket_request"] if REQUEST[0] is None else REQUEST[0]) if fusion == "tick" else None
    args = (["--strategy", "overlap", "--bucket-bytes", str(h["bucket_bytes"]), "--bucket-allreduce", "ring"] + PROGRESS +
            concurrency(h["bucket_concurrency"]) + ["--bucket-cycle", repr(cycle), "--bucket-fusion", fusion] +
            (["--bucket-request", request] if request else []))
    for net, spec in h["nets"].items():
        if NETS and net not in NETS:
            continue
        target = h["batch_per_gpu"] / spec["one_gpu_images_s"]
        eff, peak_s, one = calibrate(tmp, "horovod-" + net, net, "roce-4gpu", h["batch_per_gpu"], target, args)
        for gpus in sorted(spec["published"]):
            if quick and gpus > 128:
                continue
            tflops = one["effective_tflops"]
            plat = platform(tmp, "roce-4gpu", gpus // 4, eff,
                            (["--gpu-tflops", "%.4g" % tflops] if tflops else []) + what_if(gpus // 4))
            r = train(tmp, "horovod-%s-%d" % (net, gpus), net, plat, gpus, h["batch_per_gpu"], args)
            predicted = one["update_s"] / r["update_s"]
            rows.append({
                "net": spec["label"], "gpus": gpus, "published": spec["published"][gpus], "predicted": predicted,
                "difference_points": 100 * (predicted - spec["published"][gpus]),
                "one_gpu_images_s": spec["one_gpu_images_s"], "efficiency_of_peak": eff,
                "effective_tflops": one["effective_tflops"],
                "one_gpu_update_s": one["update_s"], "update_s": r["update_s"],
                "exposed_comm_s": r["exposed_comm_s"], "buckets": r["buckets"], "wall_s": r["wall_s"],
                "command": r["command"],
            })
            print("horovod %-12s %4d GPUs: published %.0f%%, wulf %.1f%% (update %.4f s, exposed %.4f s, %.1f s wall)"
                  % (spec["label"], gpus, 100 * spec["published"][gpus], 100 * predicted, r["update_s"],
                     r["exposed_comm_s"] or 0, r["wall_s"]), flush=True)
    return {"source": h["source"], "batch_per_gpu": h["batch_per_gpu"], "bucket_bytes": h["bucket_bytes"],
            "bucket_cycle_s": cycle, "bucket_fusion": fusion, "bucket_request": request,
            "allreduce": "ring over all GPUs (NCCL 2's), overlapped with the backward pass", "rows": rows}


def goyal(tmp, quick, per_tensor=False):
    g = GOYAL
    rows = []
    # Goyal et al. reduce each layer's gradient as soon as it is computed: one bucket per
    # tensor is closest, but its 161 hierarchical allreduces on 256 ranks took over 25 minutes
    # of this 2-core machine (issue 34 item 4); --per-tensor runs it. Across the servers they
    # ran Gloo's recursive halving and doubling (section 4.1): hierarchical-rabenseifner; the
    # ring across (hierarchical) beside it.
    variants = [("25 MiB buckets (PyTorch DDP's), ring across", "hierarchical",
                 ["--bucket-bytes", str(25 * 1024 * 1024)]),
                ("25 MiB buckets, halving-doubling across (Gloo's)", "hierarchical-rabenseifner",
                 ["--bucket-bytes", str(25 * 1024 * 1024)])]
    # Their allreduces one at a time, as Horovod's (not what the paper describes): how much the
    # buckets' running at once is worth.
    variants.append(("25 MiB buckets, halving-doubling across, one at a time", "hierarchical-rabenseifner",
                     ["--bucket-bytes", str(25 * 1024 * 1024), "--bucket-concurrency", "1"]))
    # The same buckets as PyTorch DDP runs them over NCCL (--framework ddp, issue 61): cut as DDP
    # cuts them (a 1 MiB first bucket, then 25 MiB, rebuilt in the gradients' ready order), one
    # allreduce at a time on NCCL's stream, each gradient copied into its bucket and back on the
    # compute stream at the GPU's published costs (GPU_DDP). What the DDP model adds to the
    # buckets of the row above it; Caffe2 itself has no buckets and no copies (SOURCES.md 3).
    variants.append(("25 MiB buckets, halving-doubling across, as PyTorch DDP over NCCL", "hierarchical-rabenseifner",
                     ["--bucket-bytes", str(25 * 1024 * 1024), "--framework", "ddp", "--ddp-backend", "nccl"]))
    if per_tensor:
        variants.append(("one bucket per tensor, halving-doubling across", "hierarchical-rabenseifner",
                         ["--bucket-bytes", "0"]))
    base = ["--strategy", "overlap"] + PROGRESS
    # One GPU has nothing to reduce: its time is the same whatever the buckets.
    eff, peak_s, one = calibrate(tmp, "goyal", "resnet50", "bigbasin-p100", g["batch_per_gpu"],
                                 g["one_gpu_backward_s"], base + ["--bucket-allreduce", "hierarchical"],
                                 measure="backward")
    for label, algorithm, extra in variants:
        args = base + ["--bucket-allreduce", algorithm] + extra
        ddp = "--framework" in extra  # its backend decides the allreduces at once
        if "--bucket-concurrency" not in extra and not ddp:
            args += concurrency(0)
        times = {}
        for gpus in g["gpus"]:
            nodes = gpus // 8
            plat = platform(tmp, "bigbasin-p100", nodes, eff, what_if(nodes), ddp=GPU_DDP["P100-SXM2"] if ddp else None)
            times[gpus] = train(tmp, "goyal-%d-%s-%s" % (gpus, algorithm, extra[-1]), "resnet50", plat, gpus,
                                g["batch_per_gpu"], args, hosts=ring_hosts(tmp, "bigbasin", nodes),
                                updates=2 if ddp else 1)
        predicted = times[8]["update_s"] / times[256]["update_s"]
        rows.append({
            "buckets": label, "allreduce": algorithm, "published": g["published"], "predicted": predicted,
            "difference_points": 100 * (predicted - g["published"]), "efficiency_of_peak": eff,
            "one_gpu_update_s": one["update_s"], "one_gpu_backward_s": backward_s(one),
            "update_s_8": times[8]["update_s"], "update_s_256": times[256]["update_s"],
            "exposed_comm_s_8": times[8]["exposed_comm_s"], "exposed_comm_s_256": times[256]["exposed_comm_s"],
            "wall_s": times[8]["wall_s"] + times[256]["wall_s"], "command": times[256]["command"],
        })
        print("goyal %s: published 90%%, wulf %.1f%% (8 GPUs %.4f s, 256 GPUs %.4f s an update)"
              % (label, 100 * predicted, times[8]["update_s"], times[256]["update_s"]), flush=True)
    return {"source": g["source"], "batch_per_gpu": g["batch_per_gpu"],
            "allreduce": "hierarchical (a ring within each server, a ring or halving-doubling across the servers, a "
                         "ring within again), overlapped", "rows": rows}


def nccl(tmp, quick):
    n = NCCL
    rows = []
    elements = n["bytes"] // 4
    for label, nodes, nics, published, quote in n["rows"]:
        plat = platform(tmp, "dgx1-v100", nodes, extra=["--nics-per-node", str(nics)])
        for algorithm in ("ring", "hierarchical", "rings"):
            out = os.path.join(tmp, "nccl-%d-%d-%s.json" % (nodes, nics, algorithm))
            ranks = 8 * nodes
            cmd = [WULF, "platform", "bench", plat, "--np", str(ranks), "--collectives", "allreduce",
                   "--allreduce", algorithm, "--elements", str(elements), "--type", "float", "--no-pingpong",
                   "--repeat", "1", "--unread-sums", "--out", out]
            wall = run(cmd, "wulf platform bench")
            with open(out) as f:
                t = json.load(f)["collectives"][0]["time_s"]
            busbw = n["bytes"] / t * 2 * (ranks - 1) / ranks / 1e9
            rows.append({"fabric": label, "nodes": nodes, "nics_per_node": nics, "gpus": ranks,
                         "algorithm": algorithm, "bytes": n["bytes"], "time_s": t, "busbw_GBps": busbw,
                         "published_GBps": published, "difference": busbw / published - 1, "quote": quote,
                         "wall_s": round(wall, 2),
                         "command": " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c
                                             for c in cmd if not c.startswith(tmp)) + " PLATFORM"})
            print("nccl %s, %s: wulf %.1f GB/s, published %.1f GB/s" % (label, algorithm, busbw, published),
                  flush=True)
    return {"source": n["source"], "rows": rows}


def tables(results):
    L = []
    if results.get("what_if"):
        L += ["What-if, not a prediction: every platform of more than one server generated with %s."
              % results["what_if"], ""]
    if "horovod" in results:
        L += ["| net | GPUs | published | wulf | difference (points) | one GPU (input) | share of peak | "
              "update, N GPUs | exposed communication |", "|---|---|---|---|---|---|---|---|---|"]
        for r in results["horovod"]["rows"]:
            share = ("%.3f" % r["efficiency_of_peak"] if not r.get("effective_tflops")
                     else "1 at %.4g TFLOP/s (above the 9.3 peak)" % r["effective_tflops"])
            L.append("| %s | %d | %.0f%% | %.1f%% | %+.1f | %.1f images/s | %s | %.1f ms | %.1f ms |"
                     % (r["net"], r["gpus"], 100 * r["published"], 100 * r["predicted"], r["difference_points"],
                        r["one_gpu_images_s"], share, 1e3 * r["update_s"],
                        1e3 * (r["exposed_comm_s"] or 0)))
        L.append("")
    if "goyal" in results:
        L += ["| buckets, across the servers | published | wulf | difference (points) | share of peak | update, 8 GPUs | "
              "update, 256 GPUs | exposed, 256 GPUs |", "|---|---|---|---|---|---|---|---|"]
        for r in results["goyal"]["rows"]:
            L.append("| %s | ~%.0f%% | %.1f%% | %+.1f | %.3f | %.1f ms | %.1f ms | %.1f ms |"
                     % (r["buckets"], 100 * r["published"], 100 * r["predicted"], r["difference_points"],
                        r["efficiency_of_peak"], 1e3 * r["update_s_8"], 1e3 * r["update_s_256"],
                        1e3 * (r["exposed_comm_s_256"] or 0)))
        L.append("")
    if "nccl" in results:
        L += ["| fabric | GPUs | wulf's allreduce | busbw, wulf | published | difference |",
              "|---|---|---|---|---|---|"]
        for r in results["nccl"]["rows"]:
            L.append("| %s | %d | %s | %.1f GB/s | %.1f GB/s | %+.0f%% |"
                     % (r["fabric"], r["gpus"], r["algorithm"], r["busbw_GBps"], r["published_GBps"],
                        100 * r["difference"]))
        L.append("")
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["horovod", "goyal", "nccl"])
    ap.add_argument("--quick", action="store_true", help="leave out the 512-GPU runs")
    ap.add_argument("--per-tensor", action="store_true",
                    help="Goyal: also one bucket per tensor (over 25 minutes at 256 GPUs on 2 cores)")
    ap.add_argument("--progress-flops", default="1e8",
                    help="overlap's --progress-flops (default 1e8: the communication progresses all the time; "
                         "0: a progress point after each layer only)")
    ap.add_argument("--bucket-concurrency",
                    help="overlap's --bucket-concurrency for every case (default: Horovod's 1, one fused allreduce "
                         "at a time; Goyal et al.'s 0, every ready bucket under way at once)")
    ap.add_argument("--bucket-cycle",
                    help="Horovod's overlap --bucket-cycle in seconds (default: its own loop's 0.005; 0: a ready "
                         "bucket starts at once)")
    ap.add_argument("--bucket-fusion", choices=["cut", "tick"],
                    help="Horovod's overlap --bucket-fusion (default: its loop's tick, the tensors ready at a tick "
                         "fused up to the threshold; cut: buckets cut once by size, as DDP)")
    ap.add_argument("--bucket-request", choices=["computed", "scheduled"],
                    help="Horovod's overlap --bucket-request under tick fusion (default: scheduled, TensorFlow's "
                         "ops asking rank 0 ahead of the GPU; computed: each tensor once the GPU has made it)")
    ap.add_argument("--net", action="append", choices=sorted(HOROVOD["nets"]),
                    help="Horovod: run this net only (repeat for more; default all three)")
    ap.add_argument("--what-if", action="append", metavar="OPTION=VALUE", default=[],
                    help="a generate.py option (nic-gbit=20, nic-lat-us=5, ...) for every platform of more than "
                         "one server: what the predictions would be on a machine unlike the source's; needs --out "
                         "elsewhere than results/, which holds the predictions")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    for w in a.what_if:
        option, eq, value = w.partition("=")
        if not eq or not option or not value or option.startswith("-"):
            ap.error("--what-if %r: expected OPTION=VALUE, a generate.py option without its dashes" % w)
        WHAT_IF.extend(["--" + option, value])
    if a.what_if and os.path.abspath(a.out) == os.path.join(HERE, "results"):
        ap.error("--what-if: give --out elsewhere; results/ holds the predictions on the sources' machines")
    NETS.extend(a.net or [])
    PROGRESS[1] = a.progress_flops
    CONCURRENCY[0] = a.bucket_concurrency
    CYCLE[0] = a.bucket_cycle
    FUSION[0] = a.bucket_fusion
    REQUEST[0] = a.bucket_request
    if not os.path.exists(WULF):
        sys.exit("build wulf first: ./dev.sh build")
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "published.json")
    results = {}
    if a.only and os.path.exists(path):
        with open(path) as f:
            results = json.load(f)
    with tempfile.TemporaryDirectory(prefix="wulf-published-") as tmp:
        for name, fn in (("nccl", nccl), ("goyal", lambda t, q: goyal(t, q, a.per_tensor)), ("horovod", horovod)):
            if a.only in (None, name):
                results[name] = fn(tmp, a.quick)
    results["quick"] = a.quick
    results["what_if"] = " ".join(WHAT_IF) or None
    results["nets"] = a.net or "all"
    results["progress_flops"] = a.progress_flops
    results["bucket_concurrency"] = a.bucket_concurrency or "each source's own (Horovod 1, Goyal et al. 0)"
    tmp_path = path + ".part"
    with open(tmp_path, "w") as f:
        json.dump(results, f, indent=1)
    os.replace(tmp_path, path)
    text = tables(results)
    with open(os.path.join(a.out, "tables.md.part"), "w") as f:
        f.write(text)
    os.replace(os.path.join(a.out, "tables.md.part"), os.path.join(a.out, "tables.md"))
    print(text)
    # The drawing, by Debian's python3 where it is (dev.sh installs python3-matplotlib there).
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    drawn = subprocess.run([python, os.path.join(HERE, "plot.py"), path, os.path.join(a.out, "published.png")],
                           capture_output=True, text=True)
    if drawn.returncode != 0:
        sys.stderr.write("run.py: no drawing (the record and tables are written): %s\n"
                         % (drawn.stderr.strip().splitlines() or ["plot.py failed"])[-1])


if __name__ == "__main__":
    main()
