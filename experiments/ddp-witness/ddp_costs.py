#!/usr/bin/python3
"""Measures what PyTorch DDP over gloo costs beside the net's own compute, on this machine, by
microbenchmarks that do not run the witness net: the constants of wulf's `--framework ddp`.

    ddp_costs.py --out FILE.json [--repeat N]

Every figure is the median of N timings, one compute thread (torch.set_num_threads(1)), as
the witness runs. What each is, and where DDP 1.13 spends it (torch/csrc/distributed/c10d/
reducer.cpp; experiments/ddp-witness/README.md cites the lines):

  copy_Bps     a gradient into its bucket, divided by the world size on the way:
               at::mul_out(bucket_view, grad, 1 / world) (Reducer::mark_variable_ready_dense),
               bytes of the gradient per second, on buffers of 1, 4 and 26 MiB (the median);
  copy_out_Bps the bucket back into the gradient, grad.copy_(bucket_view)
               (Reducer::copy_bucket_to_grad, from finalize_bucket_dense);
  scale_Bps    with gradient_as_bucket_view, the gradient is the bucket's view and is only
               divided in place, bucket_view.div_(world);
  tensor_s, bucket_s, iteration_s
               DDP's fixed costs on the compute thread: each gradient's autograd hook
               (mark_variable_ready), each bucket's launch (all_reduce_bucket: the gloo work
               made, queued and waited for), each iteration's (DDP.forward's bookkeeping,
               prepare_for_backward, finalize_backward). Measured on one process (world 1:
               gloo's allreduce returns at once, so what is left is the framework's) with a net
               of many tiny linear layers, whose copies cost nothing: the extra time of DDP
               over the same loop without it, for several tensor and bucket counts, solved by
               least squares for the three constants;
  comm_cpu_s_per_B
               the CPU seconds gloo's threads spend per byte a rank sends in an allreduce
               (sends, receives, the sums): two processes on this machine's loopback, the
               process CPU time (all threads, user and system) of rank 0 over the bytes it
               sent, for a 16 MiB allreduce (2 (p - 1) / p of it sent per rank).
"""
import argparse
import json
import os
import resource
import socket
import statistics
import sys
import time


def median_time(f, repeat, warmup=2):
    for _ in range(warmup):
        f()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def copy_rates(torch, repeat):
    rates = {"copy_Bps": [], "copy_out_Bps": [], "scale_Bps": []}
    for mib in (1, 4, 26):
        n = mib * 2**20 // 4
        grad = torch.randn(n)
        bucket = torch.empty(n)
        scale = torch.tensor(0.5, dtype=torch.float64)  # as wrapped_scalar_tensor(1. / div_factor_)
        t = median_time(lambda: torch.mul(grad, scale, out=bucket), repeat)
        rates["copy_Bps"].append(4 * n / t)
        t = median_time(lambda: grad.copy_(bucket), repeat)
        rates["copy_out_Bps"].append(4 * n / t)
        t = median_time(lambda: bucket.div_(2), repeat)
        rates["scale_Bps"].append(4 * n / t)
    return {k: statistics.median(v) for k, v in rates.items()}, {k: v for k, v in rates.items()}


def fixed_costs(torch, dist, repeat):
    """DDP's extra time over the plain loop on nets of tiny linear layers: per tensor, per bucket,
    per iteration (least squares)."""
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel
    rows, extra = [], []
    cases = []
    for layers in (8, 32, 128):
        for one_bucket in (True, False):
            cases.append((layers, one_bucket))
    for layers, one_bucket in cases:
        torch.manual_seed(0)
        net = nn.Sequential(*[nn.Linear(4, 4) for _ in range(layers)])
        x = torch.randn(2, 4)
        opt = torch.optim.SGD(net.parameters(), lr=0.01)

        def step(model):
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()

        plain = median_time(lambda: step(net), repeat * 5, warmup=5)
        # bucket_cap_mb tiny and the first bucket's cap 1 byte: each gradient closes a bucket
        # of its own; otherwise one bucket (these nets are far below both caps).
        first = dist._DEFAULT_FIRST_BUCKET_BYTES
        dist._DEFAULT_FIRST_BUCKET_BYTES = first if one_bucket else 1
        ddp = DistributedDataParallel(net, bucket_cap_mb=1e3 if one_bucket else 1e-9)
        dist._DEFAULT_FIRST_BUCKET_BYTES = first
        t = median_time(lambda: step(ddp), repeat * 5, warmup=5)
        sizes = ddp._get_ddp_logging_data().get("rebuilt_bucket_sizes", "")
        buckets = len([s for s in sizes.split(",") if s.strip()])
        tensors = 2 * layers
        rows.append([tensors, buckets, 1.0])
        extra.append(t - plain)
        del ddp
    # Least squares for [tensor_s, bucket_s, iteration_s].
    import numpy
    a = numpy.array(rows)
    b = numpy.array(extra)
    solution, residual, _, _ = numpy.linalg.lstsq(a, b, rcond=None)
    fit = a @ solution
    return ({"tensor_s": float(solution[0]), "bucket_s": float(solution[1]), "iteration_s": float(solution[2])},
            [{"tensors": int(r[0]), "buckets": int(r[1]), "extra_s": e, "fit_s": float(f)}
             for r, e, f in zip(rows, extra, fit)])


def comm_cpu_child(rank, port, mib, repeat, queue):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    dist.init_process_group("gloo", rank=rank, world_size=2)
    t = torch.randn(mib * 2**20 // 4)
    for _ in range(3):
        dist.all_reduce(t)
    dist.barrier()
    u0 = resource.getrusage(resource.RUSAGE_SELF)
    w0 = time.perf_counter()
    for _ in range(repeat):
        dist.all_reduce(t)
    w1 = time.perf_counter()
    u1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)
    sent = repeat * t.numel() * 4  # 2 (p - 1) / p of the buffer at p = 2: the buffer once
    queue.put({"rank": rank, "cpu_s": cpu, "wall_s": w1 - w0, "sent_B": sent})
    dist.destroy_process_group()


def comm_cpu(repeat):
    import multiprocessing
    with socket.socket() as s:  # a free port on loopback
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    queue = multiprocessing.Queue()
    mib = 16
    procs = [multiprocessing.Process(target=comm_cpu_child, args=(r, port, mib, repeat, queue)) for r in (0, 1)]
    for p in procs:
        p.start()
    got = [queue.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    r0 = next(g for g in got if g["rank"] == 0)
    return r0["cpu_s"] / r0["sent_B"], got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeat", type=int, default=20)
    a = ap.parse_args()
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        print("ddp_costs.py: needs PyTorch (Debian: python3-torch)", file=sys.stderr)
        sys.exit(2)
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    copies, copy_each = copy_rates(torch, a.repeat)
    os.environ.update(MASTER_ADDR="127.0.0.1", GLOO_SOCKET_IFNAME="lo")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        os.environ["MASTER_PORT"] = str(s.getsockname()[1])
    dist.init_process_group("gloo", rank=0, world_size=1)
    fixed, fixed_cases = fixed_costs(torch, dist, a.repeat)
    dist.destroy_process_group()
    cpu_per_byte, cpu_ranks = comm_cpu(max(5, a.repeat // 2))
    constants = dict(copies, **fixed, comm_cpu_s_per_B=cpu_per_byte)
    record = {
        "wulf_record": 1,
        "kind": "ddp_costs",
        "constants": constants,
        "measurements": {"copy_rates_1_4_26_MiB": copy_each, "fixed_cost_cases": fixed_cases,
                         "comm_cpu_ranks": cpu_ranks},
        "how": __doc__,
        "host": socket.gethostname(),
        "versions": {"torch": torch.__version__},
    }
    with open(a.out + ".tmp", "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    os.replace(a.out + ".tmp", a.out)
    for k, v in constants.items():
        print("%-18s %.6g" % (k, v))


if __name__ == "__main__":
    main()
