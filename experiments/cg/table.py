"""The table of experiments/cg/run.sh: per run the simulated time per iteration, the errors
after the last iteration, and per rank the idle time per pass (idle_s = comm_s + poll_s, the
time in collectives and polls, waiting for other ranks included); with RESULTS_JSON, the same
figures as JSON (experiments/cg/check.py reads them).

    /usr/bin/python3 experiments/cg/table.py RECORDS_DIR [RESULTS_JSON]
"""
import json
import os
import sys

CHUNK = 32
SLOW_FLOPS = 0.25e9


def load(folder, name):
    with open(os.path.join(folder, name + ".json")) as f:
        return json.load(f)


def main(folder, json_path=None):
    names = [f"{p}-{v}" for p in ("toy4-slow", "toy4") for v in ("plain", "lb1.0", "lb0.8", "lb0.7")]
    runs = {}
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
        runs[name] = {"iteration_s": fin["time_s"] / iters, "passes": passes,
                      "patterns_per_gradient_pass": st["mean_patterns_per_gradient_pass"], "train_mse": train,
                      "test_accuracy": acc, "idle_s_per_pass": idle, "fast_worker_wait_s_per_pass": wait}
    first = load(folder, names[0])
    w = first["final"]["parameters"]
    # The flops charged per trained pattern: what the kernels perform forward and backward.
    flops = first["performance"]["forward_flops_per_pattern"] + first["performance"]["backward_flops_per_pattern"]
    chunk = {"flops_per_pattern": flops, "slow_s": CHUNK * flops / SLOW_FLOPS, "fast_s": CHUNK * flops / 1e9}
    print(f"\nw = {w}; one chunk of {CHUNK} patterns ({flops} flops each) takes "
          f"{chunk['slow_s']:.4f} s on the slow host, {chunk['fast_s']:.4f} s on a fast one")
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"runs": runs, "chunk": chunk}, f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:3])
