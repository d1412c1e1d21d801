#!/usr/bin/env bash
# Seed 001's text read literally (section 4.1): "For each pattern in a batch of data, the
# incremental weight updates for that pattern are added to a running total of weight
# updates", i.e. a round moves the weights by -eta times the SUM of the p x e patterns'
# gradients: `--block-step sum`. wulf's default moves them by -eta times the sum of the p
# ranks' MEAN gradients (-eta g / e per rank, core/train/strategies/ppt.cpp); sum at eta is mean at
# eta x e (tests/test_engines.cpp). This checks whether that reading learns: 8 nodes, seed
# 1, at most 5 000 rounds.
#   experiments/seed001-ppt/summed.sh [build dir]   (prints; its output is summed.txt)
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
for run in "32 2" "256 2" "32 0.5" "32 0.1"; do
  set -- $run
  e=$1 init=$2
  echo "local epoch $e, --block-step sum (eta 0.1: $(echo "0.1 * $e" | bc) per mean gradient), initial weights +-$init:"
  "$wulf" train --problem parity --strategy ppt --local-epoch "$e" --block-step sum \
      --init-range "$init" --error mse --target-error 0.01 --epochs 5000 --seed 1 \
      --engine sim --np 8 --platform "$platforms/ppt-p4.xml" --compute flops --quiet |
      grep -E '^(stopped|  train)'
done
