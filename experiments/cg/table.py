"""The table of experiments/cg/run.sh: per run the simulated time per iteration, the errors
after the last iteration, and per rank the idle time per pass (idle_s = comm_s + poll_s, the
time in collectives and polls, waiting for other ranks included).

    /usr/bin/python3 experiments/cg/table.py RECORDS_DIR
"""
import json
import os
import sys

CHUNK = 32
SLOW_FLOPS = 0.25e9


def load(folder, name):
    with open(os.path.join(folder, name + ".json")) as f:
        return json.load(f)


def main(folder):
    names = [f"{p}-{v}" for p in ("toy4-slow", "toy4") for v in ("plain", "lb1.0", "lb0.8", "lb0.7")]
    print("run               s/iter  passes  patt/grad  train_mse  test_acc   idle s/pass per rank 0 | 1 | 2 | 3"
          "    fast-worker wait s/pass")
    for name in names:
        r = load(folder, name)
        fin = r["final"]
        st = fin["strategy"]
        passes = st["gradient_passes"] + st["line_search_probes"]
        iters = fin["iterations"]
        ranks = r["phases"]["ranks"]
        idle = [q["idle_s"] / passes for q in ranks]
        # What a fast worker waits for beyond what the slow one (toy-3, rank 3) spends in the
        # same calls, i.e. waiting on other ranks rather than transferring.
        wait = max(idle[1], idle[2]) - idle[3]
        train = fin["train"]["mse"]
        acc = fin["test"]["accuracy"]
        print(f"{name:16s} {fin['time_s'] / iters:7.3f} {passes:7d} {st['mean_patterns_per_gradient_pass']:10.0f}"
              f" {train:10.5f} {acc:9.4f}   " + " | ".join(f"{x:6.3f}" for x in idle) + f"    {wait:7.3f}")
    w = load(folder, names[0])["final"]["parameters"]
    print(f"\nw = {w}; one chunk of {CHUNK} patterns (6 w flops each) takes "
          f"{CHUNK * 6 * w / SLOW_FLOPS:.4f} s on the slow host, {CHUNK * 6 * w / 1e9:.4f} s on a fast one")


if __name__ == "__main__":
    main(sys.argv[1])
