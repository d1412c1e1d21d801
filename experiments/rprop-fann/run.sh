#!/usr/bin/env bash
# wulf's --learning rprop against FANN 2.2's RPROP (fann_rprop.c) on FANN's own benchmark
# data sets (Debian's libfann-doc), from the same starting weights: the error curves over
# the epochs, the first epoch at which the two nets' weights differ, and whether FANN's
# clipped sigmoid derivative (sign_check.py) explains the difference; then wulf with
# --sigmoid-derivative fann, which should take FANN's steps to the bit all the way.
#   experiments/rprop-fann/run.sh [build dir] [epochs]
# Every net is N-16-M, sigmoid in both layers, mse, double precision. FANN trains with
# its RPROP defaults and the linear error function (its default tanh error function
# scales the output errors; wulf's mse loss is the linear one).
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
epochs="${2:-300}"
fann_rprop="$build/fann_rprop"
datasets=/usr/share/doc/libfann-dev/examples/datasets
[ -x "$fann_rprop" ] || { echo "run.sh: $fann_rprop is not built (it needs Debian's libfann-dev)" >&2; exit 1; }
[ -d "$datasets" ] || { echo "run.sh: $datasets is missing (Debian's libfann-doc)" >&2; exit 1; }
# FANN keeps its RPROP parameters in floats: 1.2f and 0.1f. These make wulf's steps FANN's
# to the bit, so that only the gradients can make the two differ.
fann_floats=(--rprop-increase 1.2000000476837158 --rprop-delta-zero 0.10000000149011612)
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
records="$here/records"
mkdir -p "$records"
values() { sed '1,/^values$/d' "$1"; }  # the weights of a wulf weights file
# Whether wulf (with FANN's floats, and the further options after $1) and FANN hold the same
# weights after $1 epochs.
same_after() {
  local epochs="$1"
  shift
  "$wulf" train "${net[@]}" --learning rprop "${fann_floats[@]}" "$@" --epochs "$epochs" --weights-in "$scratch/w0" \
    --weights-out "$scratch/wulf" --out "$scratch/r.json" --quiet > /dev/null
  "$fann_rprop" "$train" "$scratch/w0" "$epochs" - "$scratch/fann" > /dev/null
  values "$scratch/wulf" | "$python" -c '
import sys
a = [float(x) for x in sys.stdin.read().split()]
b = [float(x) for x in open(sys.argv[1]).read().split()]
sys.exit(0 if a == b else 1)' "$scratch/fann"
}
# The first epoch after which wulf (with FANN's floats and the options given) and FANN hold
# different weights, by bisection; "same" if they agree after all epochs.
first_difference() {
  if same_after "$epochs" "$@"; then echo same; return; fi
  local lo=0 hi="$epochs" mid  # the same after lo, different after hi
  while [ $((hi - lo)) -gt 1 ]; do
    mid=$(((lo + hi) / 2))
    if same_after "$mid" "$@"; then lo=$mid; else hi=$mid; fi
  done
  echo "$hi"
}
# Prints where wulf (FANN's floats, sigmoid derivative $1, then the options after it) and
# FANN part: the first epoch after which their weights differ ("same" if none), which
# weights differ after it, which gradients sign_check.py finds of another sign in FANN at
# the weights both held the epoch before, and the largest difference of a weight after the
# last epoch.
compare_with_fann() {
  local mode="$1" first differ="" flipped=""
  shift
  first="$(first_difference "$@")"
  if [ "$first" != same ]; then
    same_after "$first" "$@" || true
    differ="$(paste <(values "$scratch/wulf") "$scratch/fann" | awk '$1 != $2 {printf "%s%d", n++ ? " " : "", NR - 1}')"
    same_after $((first - 1)) "$@"
    flipped="$("$python" "$here/sign_check.py" "$mode" "$scratch/wulf" "$train" | tr '\n' ' ' | sed 's/ $//')"
  fi
  same_after "$epochs" "$@" || true
  printf '%s\ndiffering: %s\nother sign in FANN: %s\nlargest difference after %s epochs: %s\n' "$first" "$differ" \
    "$flipped" "$epochs" "$(paste <(values "$scratch/wulf") "$scratch/fann" |
      awk '{d = $1 - $2; d = d < 0 ? -d : d; if (d > m) m = d} END {print m + 0}')"
}
start=$(now)
for set in parity8 two-spiral diabetes building thyroid mushroom; do
  train="$datasets/$set.train" test="$datasets/$set.test"
  net=(--problem "fann:$train" --test-data "$test" --hidden 16 --activation sigmoid --output-activation sigmoid
       --precision double --error mse --eval-train on --seed 1)
  "$wulf" train "${net[@]}" --epochs 0 --weights-out "$scratch/w0" --out "$scratch/r.json" --quiet > /dev/null
  cp "$scratch/w0" "$records/$set-start.weights"
  "$wulf" train "${net[@]}" --learning rprop --epochs "$epochs" --weights-in "$scratch/w0" \
    --out "$records/$set-wulf.json" --quiet > /dev/null
  "$wulf" train "${net[@]}" --learning rprop "${fann_floats[@]}" --epochs "$epochs" --weights-in "$scratch/w0" \
    --out "$records/$set-wulf-fann-floats.json" --quiet > /dev/null
  "$wulf" train "${net[@]}" --learning rprop --epochs "$epochs" --weights-in "$scratch/w0" --engine sim --np 4 \
    --platform "$platforms/batcave.xml" --out "$records/$set-wulf-sim4.json" --quiet > /dev/null
  "$wulf" train "${net[@]}" --learning rprop "${fann_floats[@]}" --sigmoid-derivative fann --epochs "$epochs" \
    --weights-in "$scratch/w0" --out "$records/$set-wulf-as-fann.json" --quiet > /dev/null
  "$fann_rprop" "$train" "$scratch/w0" "$epochs" "$test" > "$records/$set-fann.csv"
  # Where the two part: with wulf's exact sigmoid derivative, then with FANN's.
  compare_with_fann exact > "$records/$set-first-difference.txt"
  compare_with_fann fann --sigmoid-derivative fann > "$records/$set-as-fann.txt"
done
echo "$(seconds_since "$start")" > "$here/wall_s.txt"
"$python" "$here/compare.py" "$here" | tee "$here/results.txt"
