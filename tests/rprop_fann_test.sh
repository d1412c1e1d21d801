#!/usr/bin/env bash
# wulf --learning rprop takes FANN 2.2's steps to the bit: from the same starting weights,
# given FANN's float parameters and FANN's sigmoid derivative, wulf and FANN (fann_rprop,
# experiments/rprop-fann) hold the same weights after 100 epochs on FANN's parity8 and
# two-spiral sets; with wulf's exact derivative the weights differ by then.
#   rprop_fann_test.sh BUILD_DIR        (exit 77: no FANN here, skipped)
set -euo pipefail
build="$1"
datasets=/usr/share/doc/libfann-dev/examples/datasets
source "$(dirname "$0")/skip.sh"
[ -x "$build/fann_rprop" ] || skip "fann_rprop not built (no libdoublefann)"
[ -d "$datasets" ] || skip "$datasets missing (Debian's libfann-doc)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
floats=(--rprop-increase 1.2000000476837158 --rprop-delta-zero 0.10000000149011612)
fail=0
for set in parity8 two-spiral; do
  net=(--problem "fann:$datasets/$set.train" --hidden 16 --activation sigmoid --output-activation sigmoid
       --precision double --seed 3 --quiet)
  "$build/wulf" train "${net[@]}" --epochs 0 --weights-out "$scratch/w0" --out "$scratch/r0.json" > /dev/null
  "$build/fann_rprop" "$datasets/$set.train" "$scratch/w0" 100 - "$scratch/fann" > /dev/null
  for derivative in fann exact; do
    "$build/wulf" train "${net[@]}" --learning rprop "${floats[@]}" --sigmoid-derivative "$derivative" --epochs 100 \
      --weights-in "$scratch/w0" --weights-out "$scratch/wulf" --out "$scratch/r.json" > /dev/null
    differ="$(paste <(sed '1,/^values$/d' "$scratch/wulf") "$scratch/fann" | awk '$1 != $2' | wc -l)"
    echo "$set, --sigmoid-derivative $derivative: $differ weights differ from FANN's after 100 epochs"
    if [ "$derivative" = fann ] && [ "$differ" != 0 ]; then fail=1; fi
    if [ "$derivative" = exact ] && [ "$differ" = 0 ]; then echo "  (expected some to differ)"; fail=1; fi
  done
done
exit "$fail"
