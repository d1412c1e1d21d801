#!/usr/bin/python3
"""What gloo's allreduce alone achieves on this network: the rate the witness's buckets travel at
when nothing computes beside them, against which wulf's simulated ring of the same bytes is set.

    wulf testbed run --platform P --np N -- gloo_rate.py --out FILE.json [--mib M] [--reps K]

Every rank allreduces one tensor of M MiB of float32 K times over gloo (after one untimed call,
in which gloo connects), one after another, nothing else running; rank 0 writes FILE: each
call's seconds, their median, and the bytes each rank sent a second (2 (p - 1) / p of the tensor
a call, gloo's ring). Needs PyTorch (Debian: python3-torch).
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_import import gloo_args, torch_and_dist  # noqa: E402


def main():
    a = gloo_args(__doc__, mib=31.1, reps=5)
    if not a.mib > 0 or a.reps < 1:
        print("gloo_rate.py: --mib must be above 0 and --reps at least 1", file=sys.stderr)
        sys.exit(2)
    torch, dist = torch_and_dist("gloo_rate.py")
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    buf = torch.ones(int(a.mib * 2**20 / 4))
    dist.all_reduce(buf)
    seconds = []
    for _ in range(a.reps):
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(buf)
        seconds.append(time.perf_counter() - t0)
    everyone = [None] * world
    dist.all_gather_object(everyone, seconds)
    if rank == 0:
        slowest = [max(r[i] for r in everyone) for i in range(a.reps)]
        sent = 2 * (world - 1) / world * buf.numel() * 4
        record = {"wulf_record": 1, "kind": "gloo_rate", "world_size": world, "mib": a.mib,
                  "values": buf.numel(), "seconds": slowest, "median_s": statistics.median(slowest),
                  "sent_Bps": sent / statistics.median(slowest), "versions": {"torch": torch.__version__}}
        with open(a.out + ".tmp", "w") as f:
            json.dump(record, f, indent=1)
            f.write("\n")
        os.replace(a.out + ".tmp", a.out)
        print("gloo_rate: %d ranks, %d floats: %.4f s a call (median of %d), %.3f MB/s sent a rank"
              % (world, buf.numel(), record["median_s"], a.reps, record["sent_Bps"] / 1e6))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
