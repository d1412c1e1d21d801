"""PyTorch for the witness's helper scripts, or their exit naming what is missing."""
import sys


def torch_and_dist(script):
    """(torch, torch.distributed), or exit 2 with a line naming script and Debian's package."""
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        print("%s: needs PyTorch (Debian: python3-torch)" % script, file=sys.stderr)
        sys.exit(2)
    return torch, dist


def gloo_args(doc, mib, reps):
    """The arguments of a script that times gloo allreduces of --mib MiB --reps times, --out FILE."""
    import argparse
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mib", type=float, default=mib)
    ap.add_argument("--reps", type=int, default=reps)
    return ap.parse_args()
