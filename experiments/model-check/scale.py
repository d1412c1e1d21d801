#!/usr/bin/env python3
"""What the model costs at scale (issue 65 item 3): wall seconds and peak memory of `wulf model`
for two questions, GPT-3 175B sharded (fsdp, full, NCCL's rings, one stream, bf16, Adam, activations recomputed) and
ResNet-50 DDP (overlap, 25 MiB buckets, ring, 32 images a GPU), on DGX H100 servers from
1 024 to 100 000 GPUs (ResNet-50 to 16 384). The platform is platforms/dgx-h100.xml's 8 servers, extended by the model to as many
(predict/rank_routes.hpp): no platform of 100 000 GPUs is built.

    python3 experiments/model-check/scale.py             # results/scale.json and a table
    python3 experiments/model-check/scale.py --repeat 3  # the best of 3 runs a cell

Run it on an idle machine: the times are this machine's wall clock.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WULF = os.environ.get("WULF", os.path.join(ROOT, "build", "wulf"))
PLATFORM = os.path.join(ROOT, "platforms", "dgx-h100.xml")

QUESTIONS = {
    "gpt3-175b-fsdp": lambda p: ["model", "--strategy", "fsdp", "--shard-algorithm", "rings", "--shard-stream", "one",
                                 "--platform", PLATFORM, "--problem", "layers:gpt3_175b", "--precision", "bf16",
                                 "--learning", "adam", "--recompute", "on", "--np", str(p), "--block", str(p), "--train-size", str(p),
                                 "--test-size", "1"],
    "resnet50-ddp": lambda p: ["model", "--overlap", "--platform", PLATFORM, "--problem", "layers:resnet50",
                               "--np", str(p), "--block", str(32 * p), "--train-size", str(32 * p), "--test-size", "1",
                               "--bucket-bytes", "26214400"],
}
# ResNet-50 stops at 16 384 GPUs: 32 images each on more would be more than ImageNet's 1 281 167.
GPUS = {"gpt3-175b-fsdp": [1024, 4096, 16384, 65536, 100000], "resnet50-ddp": [1024, 4096, 16384]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "scale.json"))
    opts = ap.parse_args()
    rows = []
    tmp = tempfile.mkdtemp(prefix="wulf-model-scale-")
    print("%-16s %7s %9s %9s %8s  %s" % ("question", "GPUs", "wall s", "MiB", "growth", "time per iteration s"))
    for name, make in QUESTIONS.items():
        last = None
        for p in GPUS[name]:
            best = None
            for _ in range(opts.repeat):
                # Each run in a process of its own, so that ru_maxrss is this run's.
                code = ("import resource,subprocess,sys,time,json;t=time.perf_counter();"
                        "r=subprocess.run(sys.argv[1:],capture_output=True,text=True);w=time.perf_counter()-t;"
                        "print(json.dumps([r.returncode,w,resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
                        "r.stdout,r.stderr]))")
                record = os.path.join(tmp, "%s-%d.json" % (name, p))
                out = subprocess.run([sys.executable, "-c", code, WULF] + make(p) + ["--out", record],
                                     capture_output=True, text=True)
                rc, wall, kib, stdout, stderr = json.loads(out.stdout)
                if rc != 0:
                    sys.exit("wulf %s failed: %s" % (" ".join(make(p)), stderr.strip()))
                if best is None or wall < best[0]:
                    best = (wall, kib, stdout)
            wall, kib, stdout = best
            iteration = json.load(open(record))["grid"][0]["time_s"]
            growth = wall / last if last else None
            last = wall
            rows.append({"question": name, "gpus": p, "wall_s": wall, "peak_kib": kib, "iteration_s": iteration,
                         "command": "wulf " + " ".join(make(p))})
            print("%-16s %7d %9.3f %9.1f %8s  %s" % (name, p, wall, kib / 1024.0,
                                                     "%.2fx" % growth if growth else "", iteration))
    shutil.rmtree(tmp)
    os.makedirs(os.path.dirname(opts.out), exist_ok=True)
    with open(opts.out, "w") as f:
        json.dump({"rows": rows, "platform": PLATFORM, "repeat": opts.repeat,
                   "cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": ")}, f, indent=1)
    print("record:", opts.out)


if __name__ == "__main__":
    main()
