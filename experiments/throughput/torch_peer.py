#!/usr/bin/python3
"""PyTorch's side of experiments/throughput: trains the digits net 784-64-64-10 (sigmoid,
mse, bias) on the first N MNIST training images as wulf_bench_mlp does, one thread, float:
for each block b, passes over the patterns in one fixed shuffled order (each block gathered
with index_select, as wulf gathers its blocks), a step per block (forward, backward of the
summed squared error / b, SGD with momentum 0.9), and prints one JSON line per block with
the best patterns per second of the passes (the first pass, a warm-up, not counted).

  torch_peer.py MNIST_DIR [--patterns N] [--blocks 16,256] [--passes P]

Prints {"peer": "pytorch", "skipped": REASON} and exits 0 when torch cannot be imported.
The BLAS PyTorch calls is whatever libblas.so.3 the loader gives it: run.sh preloads
OpenBLAS. The line names the BLAS library found mapped into this process."""
import argparse
import json
import os
import sys
import time

args = argparse.ArgumentParser()
args.add_argument("mnist_dir")
args.add_argument("--patterns", type=int, default=4096)
args.add_argument("--blocks", default="16,256")
args.add_argument("--passes", type=int, default=5)
opt = args.parse_args()

try:
    import numpy as np
    import torch
except ImportError as e:
    print(json.dumps({"peer": "pytorch", "skipped": "cannot import: %s (Debian: python3-torch)" % e}))
    sys.exit(0)


def blas_in_use():
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    return sorted(os.path.realpath(p) for p in libs)


def idx(path, n, header):
    with open(path, "rb") as f:
        f.seek(header)
        return f.read(n)


n = opt.patterns
pixels = np.frombuffer(idx(os.path.join(opt.mnist_dir, "train-images-idx3-ubyte"), n * 784, 16), np.uint8)
labels = np.frombuffer(idx(os.path.join(opt.mnist_dir, "train-labels-idx1-ubyte"), n, 8), np.uint8)
x_all = torch.from_numpy(pixels.reshape(n, 784).astype(np.float32) / 255.0)
t_all = torch.zeros(n, 10)
t_all[torch.arange(n), torch.from_numpy(labels.astype(np.int64))] = 1.0

torch.set_num_threads(1)
torch.manual_seed(1)
order = torch.randperm(n)
for b in (int(v) for v in opt.blocks.split(",")):
    net = torch.nn.Sequential(torch.nn.Linear(784, 64), torch.nn.Sigmoid(), torch.nn.Linear(64, 64),
                              torch.nn.Sigmoid(), torch.nn.Linear(64, 10), torch.nn.Sigmoid())
    sgd = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    best = 0.0
    for _ in range(opt.passes + 1):  # the first pass warms up
        t0 = time.perf_counter()
        for s in range(0, n, b):
            rows = order[s:s + b]
            x, t = x_all.index_select(0, rows), t_all.index_select(0, rows)
            sgd.zero_grad(set_to_none=True)
            loss = 0.5 * ((net(x) - t) ** 2).sum() / x.shape[0]
            loss.backward()
            sgd.step()
        rate = n / (time.perf_counter() - t0)
        best = max(best, rate)
    print(json.dumps({"peer": "pytorch", "version": torch.__version__, "block": b, "patterns": n,
                      "patterns_per_s": round(best, 1), "threads": torch.get_num_threads(),
                      "blas": blas_in_use()}), flush=True)
