#!/usr/bin/python3
"""The table of experiments/throughput/run.sh: wulf's training rate beside PyTorch+OpenBLAS,
FANN 2.2 and SGEMM, and the end-to-end `wulf train`, each against issue 17's targets.
Reads bench.json (Google Benchmark), torch.jsonl and train.json in FOLDER; writes
results.json there and prints the table.
  table.py FOLDER"""
import json
import os
import sys

here = sys.argv[1]
with open(os.path.join(here, "bench.json")) as f:
    bench = json.load(f)
best = {}  # benchmark name -> the best repetition's (patterns per second, GFlop/s)
for b in bench["benchmarks"]:
    if b.get("run_type") != "iteration" or b.get("error_occurred"):
        continue
    rate, gflops = b.get("items_per_second", 0.0), b.get("GFlop", 0.0)
    old = best.get(b["run_name"], (0.0, 0.0))
    best[b["run_name"]] = (max(old[0], rate), max(old[1], gflops))
sgemm = max(g for name, (_, g) in best.items() if name.startswith("sgemm/"))
torch, torch_skipped = {}, None
with open(os.path.join(here, "torch.jsonl")) as f:
    for line in f:
        t = json.loads(line)
        if "skipped" in t:
            torch_skipped = t["skipped"]
        else:  # the best of the processes, and the range they spanned
            old = torch.get(t["block"])
            lo = min(t["patterns_per_s"], old["lowest"]) if old else t["patterns_per_s"]
            if not old or t["patterns_per_s"] > old["patterns_per_s"]:
                torch[t["block"]] = t
            torch[t["block"]]["lowest"] = lo
with open(os.path.join(here, "train.json")) as f:
    train = json.load(f)
ph = train["phases"]
train_rate = ph["forward_patterns"] / (ph["forward_s"] + ph["backward_s"] + ph["update_s"])
iteration_rate = ph["forward_patterns"] / train["final"]["time_s"]


def verdict(ok):
    return "met" if ok else "NOT met"


out = {"sgemm_gflops": sgemm, "blocks": {}, "fann": {}, "torch_skipped": torch_skipped}
print("\nwulf float, 784-64-64-10, 4 096 MNIST patterns shuffled, one core (best of 3 repetitions)")
print("%-22s %12s %10s %9s %12s %10s %16s" % ("", "patterns/s", "GFlop/s", "x SGEMM", "PyTorch best", "x PyTorch",
                                              "x its slowest run"))
for block in (16, 256):
    rate, gflops = best["wulf/float/%d" % block]
    peer = torch.get(block, {}).get("patterns_per_s")
    lowest = torch.get(block, {}).get("lowest")
    row = {"patterns_per_s": rate, "gflops": gflops, "x_sgemm": gflops / sgemm,
           "torch_patterns_per_s": peer, "torch_lowest_patterns_per_s": lowest,
           "x_torch": rate / peer if peer else None, "x_torch_lowest": rate / lowest if lowest else None}
    out["blocks"][block] = row
    print("%-22s %12.0f %10.1f %8.2fx %12s %10s %16s" % (
        "wulf, block %d" % block, rate, gflops, gflops / sgemm, "%.0f" % peer if peer else "-",
        "%.2fx" % (rate / peer) if peer else "-", "%.2fx" % (rate / lowest) if lowest else "-"))
for name in ("fann/incremental", "fann/batch"):
    if name in best:
        out["fann"][name] = best[name][0]
        print("%-22s %12.0f" % ("FANN 2.2 " + name.split("/")[1], best[name][0]))
print("SGEMM: %.1f GFlop/s (the best of n = 512, 1024, 2048)" % sgemm)
if torch:
    t = next(iter(torch.values()))
    print("PyTorch %s, %d thread, BLAS: %s" % (t["version"], t["threads"], ", ".join(t["blas"]) or "none found"))
else:
    print("PyTorch: not run (%s)" % torch_skipped)
b256 = out["blocks"][256]["patterns_per_s"]
out["train"] = {"training_patterns_per_s": train_rate, "iteration_patterns_per_s": iteration_rate,
                "x_benchmark": train_rate / b256, "iteration_x_benchmark": iteration_rate / b256}
print("\nwulf train, block 256, 30 epochs: %.0f patterns/s in its training phases (forward, backward, update),"
      % train_rate)
print("  %.2fx the benchmark; %.0f patterns/s over whole iterations with the test passes (%.2fx)"
      % (train_rate / b256, iteration_rate, iteration_rate / b256))
print("\ntargets (issue 17, item 3):")
for block in (16, 256):
    x = out["blocks"][block]["x_torch"]
    print("  >= 1.5x PyTorch+OpenBLAS (its best process) at block %d: %s"
          % (block, "%.2fx, %s" % (x, verdict(x >= 1.5)) if x else "not measured"))
x = out["blocks"][256]["x_sgemm"]
print("  >= 85%% of SGEMM's rate on the flops performed (block 256): %.0f%%, %s" % (100 * x, verdict(x >= 0.85)))
x = out["train"]["x_benchmark"]
print("  wulf train >= 0.95x the benchmark: %.2fx, %s" % (x, verdict(x >= 0.95)))
with open(os.path.join(here, "results.json"), "w") as f:
    json.dump(out, f, indent=1)
