#!/usr/bin/env python3
"""GPT-3 175B's sharded iteration: wulf's simulation beside the bare SMPI program that sends the
same messages (issue 64 item 7, "where SimGrid's cost per message is the floor, say how far the
run is from it").

For each GPU count and shard algorithm (one ring, or the 8 rings): the platform
(`platforms/gpu/generate.py --preset dgx-a100`, 250 Gbit/s NICs, devices of 10^15 bytes so that
every size runs), then one time-only iteration of `wulf train --strategy fsdp` (bf16, recompute,
Adam, `--shard-progress-flops 1e10`, one sequence a GPU), then `wulf-bare-fsdp`
(bare_fsdp.cpp) under smpirun with wulf's SMPI settings, its allocator and its glibc
thresholds, on the same platform and hosts, with the run's units (from the layer file) and
rings (from the record). Each is timed by the wall clock, its CPU (user + system of every
process) and the peak resident set of its largest process.

    experiments/fsdp/bare.py [--build DIR] [--cells "ring:16,32,64,128 rings:16,32,64"]
                             [--slices 1e10] [--bare-only] [--out experiments/fsdp/results/bare]

--bare-only runs the bare program alone (one ring, on the platform's first hosts): the floor
where wulf would take too long.

Writes OUT/bare.json (a row a cell: both programs' wall, CPU and memory, their ratio, the
messages a rank sends) and OUT/bare.txt (the table).
"""
import argparse
import json
import re
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NET = "gpt3_175b"
LAYERS = os.path.join(ROOT, "platforms", "nets", NET + ".layers")
GENERATE = os.path.join(ROOT, "platforms", "gpu", "generate.py")
# wulf's smpirun settings (core/engine/launch.cpp smpirun_command, and the record's protocol).
SMPI_CFG = ["--cfg=smpi/simulate-computation:no", "--cfg=smpi/wtime:0", "--cfg=smpi/test:0",
            "--cfg=smpi/privatization:no", "--cfg=smpi/async-small-thresh:0",
            "--cfg=smpi/send-is-detached-thresh:65536", "--log=root.thres:warning",
            "--log=smpi_config.thres:error"]
GLIBC = "glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824"  # launch.hpp
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"


def units_of(path):
    """Each unit's parameters, in the forward order: the layer file's `unit` lines; the layers
    before the first are a unit too. A layer's parameters are the products of its shapes (the
    words after its activations)."""
    units, current = [], 0
    for line in open(path):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "unit":
            if current:
                units.append(current)
            current = 0
        elif words[0] == "layer":
            for w in words[4:]:
                if w.startswith("activations=") or "=" in w:
                    continue
                n = 1
                for d in w.split("x"):
                    n *= int(d)
                current += n
    if current:
        units.append(current)
    return units


def timed(cmd, out_path, env=None):
    """Runs cmd under /usr/bin/time, its output into out_path: wall s, CPU s (user + system of
    it and its children) and the peak resident set of its largest process, in GiB."""
    stats = out_path + ".time"
    with open(out_path, "w") as out:
        rc = subprocess.call(["/usr/bin/time", "-f", "%e %U %S %M", "-o", stats] + cmd, stdout=out,
                             stderr=subprocess.STDOUT, env=env)
    if rc != 0:
        sys.exit("%s failed (exit %d): %s" % (cmd[0], rc, open(out_path).read()[-2000:]))
    wall, user, system, kib = open(stats).read().split()[-4:]
    return {"wall_s": float(wall), "cpu_s": float(user) + float(system), "peak_gib": int(kib) / 2**20}


def platform_hosts(path):
    """The hosts of a platform file in its order (generate.py writes one <host id="..."> each)."""
    return re.findall(r'<host id="([^"]+)"', open(path).read())


def cell(build, work, gpus, algorithm, units, slices, with_wulf=True):
    """One GPU count and algorithm: wulf with a progress point after each layer's part, and
    with --shard-progress-flops SLICES too where slices is not None; then the bare program.
    Without wulf (one ring only): the bare program alone, on the platform's first hosts."""
    name = "%s-%d" % (algorithm, gpus)
    plat = os.path.join(work, "a100-%d.xml" % gpus)
    if not os.path.exists(plat):
        subprocess.check_call([sys.executable, GENERATE, "--preset", "dgx-a100", "--nodes", str(gpus // 8),
                               "--nic-gbit", "250", "--memory", str(10**15), "-o", plat], stdout=subprocess.DEVNULL)
    runs = {}
    for progress in (["0"] + ([slices] if slices else [])) if with_wulf else []:
        rec = os.path.join(work, "%s-progress-%s.json" % (name, progress))
        run = timed([os.path.join(build, "wulf"), "train", "--quiet", "--problem", "layers:" + NET, "--numerics",
                     "off", "--engine", "sim", "--platform", plat, "--np", str(gpus), "--train-size", str(gpus),
                     "--block", str(gpus), "--test-size", "0", "--epochs", "1", "--strategy", "fsdp", "--precision",
                     "bf16", "--recompute", "on", "--learning", "adam", "--shard-progress-flops", progress,
                     "--shard-algorithm", algorithm, "--out", rec], rec + ".txt")
        r = json.load(open(rec))
        h = r["history"][-1]
        lanes = max(1, len(r["config"]["rank_rings"] or []))
        runs[progress] = dict(run, simulated_s=h["time_s"], gathers=h["gathers"], reductions=h["reductions"],
                              messages_per_rank=(h["gathers"] + h["reductions"]) * (gpus - 1) * lanes)
    rings = (r["config"]["rank_rings"] or []) if with_wulf else []
    plan = os.path.join(work, name + ".plan")
    with open(plan, "w") as f:
        f.write("value_bytes 2\n")
        f.writelines("unit %d\n" % v for v in units)
        f.writelines("ring %s\n" % " ".join(map(str, ring)) for ring in rings)
    hosts = os.path.join(work, name + ".hosts")
    with open(hosts, "w") as f:
        f.writelines(hn + "\n" for hn in (r["hosts"] if with_wulf else platform_hosts(plat)[:gpus]))
    env = dict(os.environ, GLIBC_TUNABLES=GLIBC, TMPDIR=work)
    if os.path.exists(TCMALLOC):
        env["LD_PRELOAD"] = TCMALLOC
    out = os.path.join(work, name + ".bare.txt")
    bare = timed(["smpirun", "-np", str(gpus), "-platform", plat, "-hostfile", hosts] + SMPI_CFG +
                 [os.path.join(build, "wulf-bare-fsdp"), plan], out, env)
    said = json.loads([line for line in open(out) if line.startswith("{")][-1])
    bare.update(simulated_s=said["simulated_s"], messages_per_rank=said["messages_per_rank"])
    expected = runs["0"]["messages_per_rank"] if with_wulf else (3 * len(units) - 1) * (gpus - 1)
    if said["messages_per_rank"] != expected:
        sys.exit("%s: the bare program sent %d messages a rank, wulf %d" % (
            name, said["messages_per_rank"], expected))
    return {"gpus": gpus, "algorithm": algorithm, "lanes": max(1, len(rings)), "units": len(units),
            "wulf_by_progress_flops": runs, "bare": bare}


def table(rows):
    lines = ["GPT-3 175B, one time-only fsdp iteration (bf16, recompute, Adam, one sequence a GPU) on DGX A100",
             "servers: wulf beside the bare SMPI program that sends the same messages (bare_fsdp.cpp); wall s of",
             "this machine, and wulf's over the bare program's. wulf: a progress point after each layer's forward and",
             "backward part (--shard-progress-flops 0), and between slices of 1e10 flops too (zhao.py's setting)",
             "%-6s %5s %5s %10s | %9s %8s | %9s %6s | %9s %6s" % (
                 "algo", "GPUs", "lanes", "msgs/rank", "bare wall", "bare sim", "wulf wall", "x bare", "sliced", "x bare")]
    for c in rows:
        b, w = c["bare"], c["wulf_by_progress_flops"]
        sliced = [v for k, v in w.items() if k != "0"]
        if "0" not in w:
            lines.append("%-6s %5d %5d %10d | %9.2f %8.3f | %9s %6s | %9s %6s" % (
                c["algorithm"], c["gpus"], c["lanes"], b["messages_per_rank"], b["wall_s"], b["simulated_s"],
                "-", "-", "-", "-"))
            continue
        lines.append("%-6s %5d %5d %10d | %9.2f %8.3f | %9.2f %6.2f | %9s %6s" % (
            c["algorithm"], c["gpus"], c["lanes"], b["messages_per_rank"], b["wall_s"], b["simulated_s"],
            w["0"]["wall_s"], w["0"]["wall_s"] / b["wall_s"],
            "%.2f" % sliced[0]["wall_s"] if sliced else "-", "%.2f" % (sliced[0]["wall_s"] / b["wall_s"]) if sliced else "-"))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--cells", default="ring:16,32,64,128 rings:16,32,64",
                    help="ALGORITHM:GPUS,... each (--shard-algorithm ring or rings; GPUs a multiple of 8) "
                         "(default %(default)s)")
    ap.add_argument("--slices", default="1e10",
                    help="wulf also with this --shard-progress-flops ('' for none; default %(default)s)")
    ap.add_argument("--bare-only", action="store_true",
                    help="the bare program alone, one ring only (its floor where wulf would take too long)")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "bare"))
    args = ap.parse_args()
    cells = []
    for word in args.cells.split():
        algorithm, _, counts = word.partition(":")
        if algorithm not in ("ring", "rings"):
            sys.exit("--cells %s: the algorithm is ring or rings" % word)
        try:
            gpus = [int(g) for g in counts.split(",")]
        except ValueError:
            sys.exit("--cells %s: expected ALGORITHM:GPUS,..." % word)
        if any(g < 8 or g % 8 for g in gpus):
            sys.exit("--cells %s: each GPU count a multiple of 8 (whole DGX A100 servers)" % word)
        if args.bare_only and algorithm != "ring":
            sys.exit("--bare-only: one ring only (the rings are the record's)")
        cells += [(algorithm, g) for g in gpus]
    os.makedirs(args.out, exist_ok=True)
    units = units_of(LAYERS)
    rows = []
    with tempfile.TemporaryDirectory(prefix="wulf-bare-fsdp-") as work:
        for algorithm, gpus in cells:
            rows.append(cell(args.build, work, gpus, algorithm, units, args.slices, not args.bare_only))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    json.dump({"net": NET, "units": len(units), "parameters": sum(units), "cells": rows},
              open(os.path.join(args.out, "bare.json"), "w"), indent=1)
    text = table(rows)
    open(os.path.join(args.out, "bare.txt"), "w").write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
