"""The 2-rank table of experiments/gemm/run.sh, from the JSON lines of
`wulf-rank-real bench --what gradient` (1 rank and 2 ranks).

    /usr/bin/python3 experiments/gemm/ranks_table.py ranks.jsonl

For each net and total batch B run on 2 ranks:
  1 rank         GFlop/s of 1 rank on all B patterns (6w per pattern);
  2 ranks        aggregate GFlop/s of 2 ranks, each on B/2, without and with the reduce
                 of the gradient to rank 0; reduce = the difference of the two times;
  speedup        1-rank time over 2-rank time, without and with the reduce;
  per core       2-rank rate per core over the 1-rank rate at the same batch per rank (B/2);
  x SGEMM        2-rank rate per core over the SGEMM rate per core with both cores busy,
                 counting 6w / counting the gradient's products (gemm_flops);
  on CPU         the least share of its wall time a rank spent on a CPU during the best
                 2-rank round (1-rank round): below ~98% something else held a core, and
                 the line understates what the machine can do.
"""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
one = {(r["net"], r["patterns"]): r for r in rows if r["np"] == 1}
two = [r for r in rows if r["np"] == 2]
sgemm = {r["np"]: r["sgemm_gflops_per_core"] for r in rows}
on_cpu = {r["np"]: r["sgemm_on_cpu"] for r in rows}
print(f"SGEMM n = 1024 per core: {sgemm.get(1, 0):.1f} GFlop/s on 1 rank (on CPU {100 * on_cpu.get(1, 0):.0f}%), "
      f"{sgemm.get(2, 0):.1f} with 2 ranks at once (on CPU {100 * on_cpu.get(2, 0):.0f}%)")
head = (f"{'net':7}{'batch':>7}{'per rank':>9}{'1 rank':>9}{'2 ranks':>9}{'+reduce':>9}{'reduce ms':>10}"
        f"{'speedup':>9}{'+reduce':>9}{'per core':>10}{'x SGEMM':>11}{'on CPU':>14}")
print(head)
for r in two:
    b, net = r["patterns"], r["net"]
    r1, half = one.get((net, b)), one.get((net, b // 2))
    reduce_ms = (r["with_reduce_s"] - r["gradient_s"]) * 1e3
    line = f"{net:7}{b:7d}{r['patterns_per_rank']:9d}"
    line += f"{r1['gflops']:9.1f}" if r1 else f"{'-':>9}"
    line += f"{r['gflops']:9.1f}{r['gflops_with_reduce']:9.1f}{reduce_ms:10.2f}"
    if r1:
        line += f"{r['gflops'] / r1['gflops']:9.2f}{r['gflops_with_reduce'] / r1['gflops']:9.2f}"
    else:
        line += f"{'-':>9}{'-':>9}"
    line += f"{r['gflops_per_core'] / half['gflops']:10.2f}" if half else f"{'-':>10}"
    line += f"{r['ratio_to_sgemm']:6.2f}/{r['gemm_ratio_to_sgemm']:4.2f}"
    line += f"{100 * r['gradient_on_cpu']:8.0f}%" + (f" ({100 * r1['gradient_on_cpu']:.0f}%)" if r1 else "")
    print(line)
