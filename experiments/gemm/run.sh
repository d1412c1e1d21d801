#!/usr/bin/env bash
# The float batch gradient against this machine's SGEMM (issue 6, item 5):
#  1. one core: build/wulf_bench_gemm (multiply-add peak, SGEMM n = 512, 1024, 2048, the
#     gradient of the JOCR and digits nets at several batches, and their matrix products
#     alone), the best of 3 repetitions each;
#  2. mpirun, 1 and 2 ranks: `wulf-rank-real bench --job-text JOB`, JOB a gradient benchmark
#     (CommBenchConfig as JSON, comm/comm_bench.hpp; each rank the gradient
#     of its share of the batch, then reduce_sum to rank 0), the best of $ROUNDS rounds each
#     (default 5: on a shared machine the best round is the one least disturbed);
#     1 rank runs every batch and every half batch, so that 2 ranks can be set against 1
#     rank at the same total batch and at the same batch per rank.
# Prints everything and the 2-rank table; writes results.txt and ranks.jsonl beside this
# script, or into $OUT.
#   experiments/gemm/run.sh [build dir]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
rounds="${ROUNDS:-5}"

# 1 and 2 ranks fit the cores, so no --oversubscribe and Open MPI binds each rank to a core
# of its own (root's consent to Open MPI: common.sh).
ranks() {  # ranks NP NET BATCHES
  local job
  job=$(printf '{"what": "gradient", "sizes": [%s], "doubles": true, "repeat": %d, "back_to_back": false,
    "unread": false, "bw_scale": 1, "lat_scale": 1, "dilation": 1, "reduce": "default", "reduce_layout": "",
    "check": false, "root": 0, "net": "%s", "sgemm_n": 1024}' "$3" "$rounds" "$2")
  mpirun -np "$1" "$build/wulf-rank-real" bench --job-text "$job"
}

declare -A batches=([jocr]="256,1024,4096,64000" [digits]="256,1024,4096,16384")
declare -A halves=([jocr]="128,512,2048,32000" [digits]="128,512,2048,8192")

{
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB;" \
       "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$build/wulf_bench_gemm" --benchmark_repetitions=3
  echo
  : > "$out/ranks.jsonl"
  for net in jocr digits; do
    ranks 1 "$net" "${batches[$net]},${halves[$net]}" | tee -a "$out/ranks.jsonl"
    ranks 2 "$net" "${batches[$net]}" | tee -a "$out/ranks.jsonl"
  done
  "$python" "$here/ranks_table.py" "$out/ranks.jsonl"
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out/results.txt"
