#!/usr/bin/env python3
"""nccl-tests' bus bandwidth of wulf's simulated allreduces on platforms/dgx-a100.xml and
dgx-h100.xml (run.sh's records), beside the published figures (README.md gives each source).

    busbw = S / t x 2 (n - 1) / n        (nccl-tests doc/PERFORMANCE.md, AllReduce)

S the bytes each rank reduces, t the simulated time of one allreduce, n the ranks.

    python3 experiments/gpu-platforms/busbw.py experiments/gpu-platforms/results
"""

import json
import os
import sys

# Published all_reduce_perf busbw, GB/s, for large messages (README.md, "Published figures").
PUBLISHED = {
    ("a100", 8): [("NCCL default", 230.0, "NVIDIA/nccl-tests #149, sjeaugey: ~230")],
    ("a100", 16): [("NCCL, algorithm not stated", 192.0, "NVIDIA/nccl #812, AddyLaddy: 192")],
    ("h100", 8): [("NCCL_ALGO=RING", 370.0, "NVIDIA/nccl-tests #212, sjeaugey: 370"),
                  ("NCCL default, NVLS", 480.0, "NVIDIA/nccl-tests #212, sjeaugey: ~480")],
    ("h100", 16): [("NCCL_ALGO=RING, derived", 376.0, "8 x 46-48 GB/s a NIC, NVIDIA/nccl-tests #290, AddyLaddy")],
}


def rows(results):
    out = []
    for machine in ("a100", "h100"):
        for algorithm in ("ring", "rings", "hierarchical"):
            path = os.path.join(results, "allreduce-%s-%s.json" % (machine, algorithm))
            with open(path) as f:
                record = json.load(f)
            for row in record["collectives"]:
                n, size, t = row["np"], row["bytes"], row["time_s"]
                algbw = size / t / 1e9
                out.append({"machine": machine, "algorithm": row["algorithm"], "np": n, "bytes": size,
                            "time_s": t, "algbw": algbw, "busbw": algbw * 2 * (n - 1) / n})
    return out


def pingpongs(results):
    out = []
    for machine in ("a100", "h100"):
        for tag in ("inside", "across"):
            with open(os.path.join(results, "pingpong-%s-%s.json" % (machine, tag))) as f:
                record = json.load(f)
            by_size = {r["bytes"]: r["time_s"] for r in record["pingpong"]}
            out.append((machine, tag, by_size[8], 67108864 / by_size[67108864] / 1e9))
    return out


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    print("Ping-pong, one way (8 bytes: latency; 64 MiB: rate):")
    print("| platform | route | 8 B | 64 MiB rate |")
    print("|---|---|---|---|")
    for machine, tag, lat, rate in pingpongs(results):
        print("| dgx-%s | %s | %.2f us | %.1f GB/s |" % (machine, tag, lat * 1e6, rate))
    print()
    print("Allreduce, busbw = S / t x 2 (n - 1) / n:")
    print("| platform | GPUs | wulf's allreduce | S | time | algbw | busbw |")
    print("|---|---|---|---|---|---|---|")
    table = rows(results)
    for r in table:
        print("| dgx-%s | %d | %s | %d MiB | %.1f us | %.1f GB/s | %.1f GB/s |"
              % (r["machine"], r["np"], r["algorithm"], r["bytes"] >> 20, r["time_s"] * 1e6, r["algbw"], r["busbw"]))
    print()
    print("Beside the published figures, at 256 MiB (difference: wulf's allreduce that runs as NCCL's did,")
    print("ring in one server, rings across two, over the published figure, less 1):")
    print("| platform | GPUs | published (what NCCL ran) [source] | published busbw | wulf ring | wulf rings "
          "| wulf hierarchical | difference |")
    print("|---|---|---|---|---|---|---|---|")
    for (machine, n), published in PUBLISHED.items():
        busbw = {r["algorithm"]: r["busbw"] for r in table
                 if r["machine"] == machine and r["np"] == n and r["bytes"] == 256 << 20}
        like_nccl = "ring" if n == 8 else "rings"
        for what, figure, source in published:
            print("| dgx-%s | %d | %s [%s] | %.0f GB/s | %.1f GB/s | %.1f GB/s | %.1f GB/s | %+.0f%% (%s) |"
                  % (machine, n, what, source, figure, busbw["ring"], busbw["rings"], busbw["hierarchical"],
                     100 * (busbw[like_nccl] / figure - 1), like_nccl))
    print()
    print("What-if (not a shipped platform): NCCL's effective NVLink rate a link (src/graph/topo.h), 8 GPUs, ring:")
    print("| platform | NVLink a link | S | time | busbw | published | difference |")
    print("|---|---|---|---|---|---|---|")
    for machine, rate in (("a100", "20 GB/s"), ("h100", "20.6 GB/s")):
        path = os.path.join(results, "whatif-nccl-nvlink-%s.json" % machine)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            record = json.load(f)
        figure = PUBLISHED[(machine, 8)][0][1]
        for row in record["collectives"]:
            n, size, t = row["np"], row["bytes"], row["time_s"]
            b = size / t / 1e9 * 2 * (n - 1) / n
            print("| dgx-%s | %s | %d MiB | %.1f us | %.1f GB/s | %.0f GB/s | %+.0f%% |"
                  % (machine, rate, size >> 20, t * 1e6, b, figure, 100 * (b / figure - 1)))

if __name__ == "__main__":
    main()
