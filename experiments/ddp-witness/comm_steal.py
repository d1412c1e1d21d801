#!/usr/bin/python3
"""How much compute gloo's communication takes from a rank's compute thread on this network:
the comm_cpu constant of the hosts' wulf:ddp, by a microbenchmark that is not the witness.

    wulf testbed run --platform P --np N -- comm_steal.py --out FILE.json [--mib M] [--reps K]

Every rank times the same compute kernel K times (a 3x3 convolution of 64 to 64 channels on a
batch of 16 images of 32x32, forward and backward, one thread), first alone, then while a
thread of its own runs gloo allreduces of M MiB back to back over the process group, as DDP's
buckets run beside its backward pass. The compute's extra seconds over the bytes the rank sent
meanwhile (2 (p - 1) / p of each allreduce, gloo's ring) is the CPU time the communication took
from it per byte sent: the process group's threads, and the kernel's network path that runs in
the rank's time (each packet's arrival wakes gloo's TCP loop, which preempts the compute). Rank 0
writes FILE: each rank's figures and their median. Needs PyTorch (Debian: python3-torch).
"""
import json
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_import import gloo_args, torch_and_dist  # noqa: E402


def main():
    a = gloo_args(__doc__, mib=8.0, reps=40)
    torch, dist = torch_and_dist("comm_steal.py")
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)
    conv = torch.nn.Conv2d(64, 64, 3, padding=1)
    x = torch.randn(16, 64, 32, 32, requires_grad=True)

    def compute():
        t0 = time.perf_counter()
        for _ in range(a.reps):
            y = conv(x)
            y.backward(torch.ones_like(y))
        return time.perf_counter() - t0

    for _ in range(3):
        compute()
    dist.barrier()
    alone = statistics.median(compute() for _ in range(3))

    # The same compute beside allreduces on a thread of the rank's own: the ranks agree on the
    # number of allreduces first (an allreduce needs every rank), enough to outlast the compute
    # at the rate measured here, and the rate is measured once more on them.
    buf = torch.ones(int(a.mib * 2**20 / 4))
    dist.barrier()
    t0 = time.perf_counter()
    dist.all_reduce(buf)
    agreed = torch.tensor([time.perf_counter() - t0, alone], dtype=torch.float64)
    dist.all_reduce(agreed, op=dist.ReduceOp.MAX)
    one, calls = agreed[0].item(), int(3 * agreed[1].item() / agreed[0].item()) + 4
    done = []

    def communicate():
        s = time.perf_counter()
        for _ in range(calls):
            dist.all_reduce(buf)
        done.append(time.perf_counter() - s)

    dist.barrier()
    worker = threading.Thread(target=communicate)
    worker.start()
    time.sleep(min(1.0, 2 * one))  # the stream under way
    beside = compute()
    worker.join()
    comm_s = done[0]
    sent_per_call = 2 * (world - 1) / world * buf.numel() * 4
    rate = calls * sent_per_call / comm_s  # bytes a second this rank sent
    steal = (beside - alone) / (rate * beside)  # extra compute seconds per byte sent beside it
    mine = {"rank": rank, "alone_s": alone, "beside_s": beside, "calls": calls, "comm_s": comm_s,
            "sent_Bps": rate, "comm_cpu_s_per_B": steal}
    everyone = [None] * world
    dist.all_gather_object(everyone, mine)
    if rank == 0:
        record = {"wulf_record": 1, "kind": "comm_steal", "world_size": world, "mib": a.mib, "reps": a.reps,
                  "kernel": "Conv2d(64, 64, 3) forward and backward, batch 16 of 64x32x32, one thread",
                  "ranks": everyone,
                  "comm_cpu_s_per_B": statistics.median(r["comm_cpu_s_per_B"] for r in everyone),
                  "versions": {"torch": torch.__version__}}
        with open(a.out + ".tmp", "w") as f:
            json.dump(record, f, indent=1)
            f.write("\n")
        os.replace(a.out + ".tmp", a.out)
        print("comm_steal: %d ranks: compute %.3f s alone, %.3f s beside %.2f MB/s sent: %.3g s a byte"
              % (world, alone, beside, rate / 1e6, record["comm_cpu_s_per_B"]))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
