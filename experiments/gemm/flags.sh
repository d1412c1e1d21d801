#!/usr/bin/env bash
# The one-core part of run.sh under other code-generation flags: which instruction set and
# which instruction scheduling Eigen's SGEMM and wulf's gradient get. Each variant is its own
# build (only wulf_bench_gemm and what it needs) under build/variants/; `default` is the
# given build dir. Prints each variant's summary; writes flags.txt beside this script.
#   experiments/gemm/flags.sh [build dir]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
build="$(cd "$build" && pwd)"  # absolute, and a missing folder stops the script here
mnist="$(sed -n 's/^WULF_MNIST_DIR:PATH=//p' "$build/CMakeCache.txt")"

# name | cmake options (beside Release, no tests)
variants=(
  "tune-generic|-DWULF_TUNE=generic"
  "no-avx512|-DCMAKE_CXX_FLAGS=-mno-avx512f"
  "x86-64-v3|-DWULF_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3"
  "portable|-DWULF_NATIVE=OFF"
)
filter='fma|sgemm|gradient/jocr/(1024|32000)|gradient/digits/1024'

summary() {  # summary NAME BINARY
  echo "== $1"
  "$2" --benchmark_filter="$filter" --benchmark_repetitions=2 2> /dev/null | sed -n '/^summary/,$p'
  echo
}

{
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  summary default "$build/wulf_bench_gemm"
  for v in "${variants[@]}"; do
    name="${v%%|*}"
    dir="$build/variants/$name"
    mkdir -p "$dir"
    # The build's own output (and g++ 12's false warnings outside -march=native) goes to a
    # log, shown only if the build fails.
    # shellcheck disable=SC2086  # the options are words
    { cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DWULF_TESTS=OFF -DWULF_MNIST_DIR="$mnist" ${v#*|} &&
      cmake --build "$dir" -j2 --target wulf_bench_gemm; } > "$dir/build.log" 2>&1 || { cat "$dir/build.log"; exit 1; }
    summary "$name" "$dir/wulf_bench_gemm"
  done
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$here/flags.txt"
