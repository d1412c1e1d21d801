#!/usr/bin/python3
"""How fast this machine computes right now: the time of one fixed kernel, one thread.

    speed_probe.py --out FILE.json

This virtual machine's speed moves with what its host does: the witness net's loop without
DDP took 2.31 s an iteration at one hour and 2.62 s at another. run.sh probes before it
measures the layers' times and before each testbed cell, and wulf's prediction of a cell is made
at the speed the probes tell (--speed-scale: the layers' probe over the cell's), so that a
cell is not compared with compute measured on a faster or slower machine. The kernel is not the
witness's: a 3x3 convolution of 64 to 64 channels on 16 images of 32x32, forward and backward,
10 times; FILE gets the median of 7 such, and each. Needs PyTorch (Debian: python3-torch).
"""
import argparse
import json
import os
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("speed_probe.py: needs PyTorch (Debian: python3-torch)", file=sys.stderr)
        sys.exit(2)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(64, 64, 3, padding=1)
    x = torch.randn(16, 64, 32, 32, requires_grad=True)
    times = []
    for i in range(9):
        t0 = time.perf_counter()
        for _ in range(10):
            y = conv(x)
            y.backward(torch.ones_like(y))
        if i >= 2:
            times.append(time.perf_counter() - t0)
    record = {"wulf_record": 1, "kind": "speed_probe", "seconds": statistics.median(times), "each_s": times,
              "kernel": "Conv2d(64, 64, 3) forward and backward on 16 x 64 x 32 x 32, 10 times, one thread",
              "when": time.time()}
    with open(a.out + ".tmp", "w") as f:
        json.dump(record, f)
        f.write("\n")
    os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main()
