#!/usr/bin/env bash
# Load balancing of seed 002's conjugate gradient (section 6.2), in simulation: idle time
# per pass with and without it, on tests/platforms/toy4-slow.xml (three hosts at 1 Gflop/s,
# toy-3 at 0.25 Gflop/s) and, for reference, on the homogeneous toy4.xml.
#
# Every run: chars:64 (seed 002's generated 20x20 glyphs, 64 classes, 1 024 training and 256
# test patterns), net 400-120-64 tanh/tanh, mean squared error (w = 55 864), float, --engine
# sim --np 4 --compute flops, 10 CG iterations, seed 1.
#   experiments/cg/run.sh [build dir]
# Writes one record per run into experiments/cg/records/ and the table into results.txt and
# results.json (into $OUT if set).
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
records="$out/records"
mkdir -p "$records"
common=(train --problem chars:64 --hidden 120 --strategy cg --epochs 10 --seed 1 --quiet
        --engine sim --np 4 --compute flops)
run() {  # name platform [options...]
  local name=$1 platform=$2
  shift 2
  "$wulf" "${common[@]}" --platform "$test_platforms/$platform.xml" --out "$records/$name.json" "$@" > /dev/null
}
for platform in toy4-slow toy4; do
  run "$platform-plain" "$platform"
  run "$platform-lb1.0" "$platform" --load-balance 1 --chunk 32
  run "$platform-lb0.8" "$platform" --load-balance 0.8 --chunk 32
  run "$platform-lb0.7" "$platform" --load-balance 0.7 --chunk 32
done
"$python" "$here/table.py" "$records" "$out/results.json" | tee "$out/results.txt"
