#!/usr/bin/python3
"""Times PyTorch DistributedDataParallel over gloo: the witness wulf did not write.

    ddp_bench.py --out FILE.json [--net witness|small] [--batch B] [--warmup W] [--iterations N]
                 [--bucket-cap-mb MB] [--gradient-as-bucket-view] [--no-ddp] [--seed S]

One process per rank, started with torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT: `wulf testbed run ... -- ddp_bench.py ...` sets it); without it, one process
alone. Each rank runs one compute thread (torch.set_num_threads(1)) and trains the net of
witness_net.py with SGD on a fixed batch of random inputs of B samples (its own, seeded by
its rank): per iteration zero_grad, forward, cross-entropy loss, backward, step, timed with
perf_counter. With --no-ddp the net is not wrapped (one process: what DDP's overhead is
measured against); otherwise DDP(net, bucket_cap_mb=MB, gradient_as_bucket_view=...) over a
gloo process group (its defaults: 2 worker threads, one TCP device).

After W warm-up iterations, N are timed. Rank 0 gathers every rank's times and writes FILE:
the configuration, each rank's iteration seconds, per iteration the slowest rank's, their p50
and p90 (and the spread), the buckets DDP built first and rebuilt after iteration 1 (its
logging data), and the versions. Needs PyTorch (Debian: python3-torch).
"""
import argparse
import json
import os
import platform
import socket
import statistics
import sys
import time


def percentile(values, q):
    """The q-th percentile (0..100) with linear interpolation between order statistics."""
    v = sorted(values)
    if len(v) == 1:
        return v[0]
    at = (len(v) - 1) * q / 100.0
    lo = int(at)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (at - lo)


def fail(message):
    print("ddp_bench.py: " + message, file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("--out", required=True, help="the JSON record (written by rank 0)")
    ap.add_argument("--net", default="witness", choices=["witness", "small"])
    ap.add_argument("--batch", type=int, default=32, help="samples per rank and iteration")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--bucket-cap-mb", type=float, default=25.0)
    ap.add_argument("--gradient-as-bucket-view", action="store_true")
    ap.add_argument("--no-ddp", action="store_true")
    ap.add_argument("--paired", action="store_true",
                    help="one process: a copy of the net without DDP trained beside the DDP one, an iteration of "
                         "each in turn, for DDP's overhead on the same machine at the same moment")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.batch < 1 or a.warmup < 0 or a.iterations < 1 or not a.bucket_cap_mb > 0:
        fail("--batch and --iterations must be at least 1, --warmup at least 0, --bucket-cap-mb above 0")
    try:
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel
    except ImportError:
        fail("needs PyTorch (Debian: python3-torch)")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import witness_net

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if (a.no_ddp or a.paired) and world != 1:
        fail("--no-ddp and --paired run one process alone (WORLD_SIZE is %d)" % world)
    if a.no_ddp and a.paired:
        fail("--paired trains the net with DDP and without: not with --no-ddp")

    torch.manual_seed(a.seed)  # the same initial weights on every rank (DDP broadcasts rank 0's anyway)
    net, shape = witness_net.net_and_shape(a.net)
    plain = None
    if a.paired:  # the same weights, a net of its own, never wrapped
        torch.manual_seed(a.seed)
        plain, _ = witness_net.net_and_shape(a.net)
    model = net
    group = None
    if not a.no_ddp:
        if "MASTER_ADDR" not in os.environ:  # one process alone: a store of its own on loopback
            os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
            os.environ.setdefault("MASTER_PORT", "29500")
            os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        dist.init_process_group("gloo", rank=rank, world_size=world)
        group = dist.group.WORLD
        model = DistributedDataParallel(net, bucket_cap_mb=a.bucket_cap_mb,
                                        gradient_as_bucket_view=a.gradient_as_bucket_view)
    gen = torch.Generator().manual_seed(a.seed * 1000 + rank)
    x = torch.randn(a.batch, *shape, generator=gen)
    y = torch.randint(0, witness_net.CLASSES, (a.batch,), generator=gen)
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    plain_opt = torch.optim.SGD(plain.parameters(), lr=0.01) if plain is not None else None
    plain_times = []

    times, parts = [], []
    first_buckets = None
    ddp_stats = []  # DDP's own timers (its logger), where it sampled them
    for it in range(a.warmup + a.iterations):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        t1 = time.perf_counter()
        loss.backward()  # with DDP: returns once every bucket's allreduce is done and copied back
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        times.append(t3 - t0)
        parts.append({"forward_s": t1 - t0, "backward_s": t2 - t1, "step_s": t3 - t2})
        if plain is not None:  # the same iteration without DDP, right after
            p0 = time.perf_counter()
            plain_opt.zero_grad()
            loss_fn(plain(x), y).backward()
            plain_opt.step()
            plain_times.append(time.perf_counter() - p0)
        if group is not None:
            d = model._get_ddp_logging_data()
            if it == 0:
                first_buckets = d.get("bucket_sizes")
            if it >= a.warmup and "avg_backward_compute_time" in d:
                ddp_stats.append({k: d[k] * 1e-9 for k in ("avg_backward_compute_time", "avg_backward_comm_time",
                                                          "avg_backward_compute_comm_overlap_time") if k in d})
    timed = times[a.warmup:]

    ddp_data = model._get_ddp_logging_data() if group is not None else {}
    all_times = [timed]
    if group is not None:
        all_times = [None] * world
        dist.all_gather_object(all_times, timed)
    if rank == 0:
        slowest = [max(r[i] for r in all_times) for i in range(a.iterations)]
        record = {
            "wulf_record": 1,
            "kind": "ddp_bench",
            "config": {
                "net": a.net, "input_shape": list(shape), "batch_per_rank": a.batch,
                "parameters": sum(p.numel() for p in net.parameters()),
                "world_size": world, "ddp": not a.no_ddp, "backend": "gloo" if group is not None else None,
                "bucket_cap_mb": None if a.no_ddp else a.bucket_cap_mb,
                "gradient_as_bucket_view": None if a.no_ddp else a.gradient_as_bucket_view,
                "warmup": a.warmup, "iterations": a.iterations, "seed": a.seed,
                "compute_threads": torch.get_num_threads(), "optimizer": "SGD lr 0.01",
            },
            "ranks_s": all_times,
            "iteration_s": slowest,
            "p50_s": percentile(slowest, 50),
            "p90_s": percentile(slowest, 90),
            "mean_s": statistics.fmean(slowest),
            "warmup_s": times[:a.warmup],
            "paired": None if plain is None else {
                "plain_s": plain_times[a.warmup:],
                "plain_p50_s": percentile(plain_times[a.warmup:], 50),
                # DDP's overhead: the median of each iteration's ratio to the plain one after it
                "overhead": statistics.median(d / q for d, q in zip(timed, plain_times[a.warmup:])) - 1,
            },
            "rank0_parts": parts[a.warmup:],
            "ddp_logger_s": ddp_stats[-1] if ddp_stats else None,
            "buckets": None if group is None else {
                "first_iteration_bytes": first_buckets,
                "rebuilt_bytes": ddp_data.get("rebuilt_bucket_sizes"),
                "rebuilt_param_indices": ddp_data.get("rebuilt_per_bucket_param_indices"),
            },
            "host": socket.gethostname(),
            "versions": {"torch": torch.__version__, "python": platform.python_version()},
        }
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(record, f, indent=1)
            f.write("\n")
        os.replace(tmp, a.out)
        print("ddp_bench: %s world %d: p50 %.4f s, p90 %.4f s an iteration (%d timed)"
              % ("no DDP" if a.no_ddp else "DDP cap %g MB%s" % (a.bucket_cap_mb, ", views" if a.gradient_as_bucket_view else ""),
                 world, record["p50_s"], record["p90_s"], a.iterations))
    if group is not None:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
