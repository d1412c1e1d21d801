#!/usr/bin/env bash
# The simulated time of one PPT round, free of wulf's bookkeeping, for every (p, e) of
# run.sh. run.sh's runs keep wulf's default iteration (ceil(256 / (p e)) rounds, one round
# for most), and after every iteration wulf sums the running errors over the ranks and
# checks the training set, each with an allreduce. Those are left out of the PPT time
# (final.strategy), but the ranks leave an allreduce at different moments and the next
# allgather absorbs that skew. Here each (p, e) runs 2 iterations of 1 000 rounds without
# the arithmetic (--numerics off charges the same time: every round trains e patterns and
# allgathers 1 002 floats whatever the weights are), so the skew falls on 2 of 2 000 rounds.
# The time to learn of a run of run.sh is then its rounds x this round time + its checks.
# Two runs with the arithmetic and 1 000 rounds per iteration check that reconstruction.
#   experiments/seed001-ppt/timing.sh [build dir]   writes timing.csv and timing-check.csv (into
#   $OUT if set); timing.csv also holds the flops charged per trained pattern
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
records="${TMPDIR:-/tmp}/wulf-seed001-timing"
mkdir -p "$records"
ppt=(train --problem parity --strategy ppt --rounds-per-iteration 1000 --engine sim
     --platform "$platforms/ppt-p4.xml" --compute flops --quiet)
echo "p,local_epoch,rounds,round_s,allgather_s,flops_per_pattern,wall_s" > "$out/timing.csv"
for pe in "1 256" "2 32" "2 64" "2 128" "2 256" "4 32" "4 64" "4 128" "4 256" "8 32" "8 64" "8 128" "8 256"; do
  set -- $pe
  t0=$(now)
  "$wulf" "${ppt[@]}" --np "$1" --local-epoch "$2" --epochs 2 --numerics off --out "$records/t-p$1-e$2.json" > /dev/null
  "$python" - "$records/t-p$1-e$2.json" "$(seconds_since "$t0")" >> "$out/timing.csv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["final"]["strategy"]
print(f"{r['config']['np']},{int(s['local_epoch'])},{int(s['rounds'])},{s['rounds_s'] / s['rounds']:.9f},"
      f"{s['allgather_s'] / s['rounds']:.9f},"
      f"{r['performance']['forward_flops_per_pattern'] + r['performance']['backward_flops_per_pattern']},"
      f"{float(sys.argv[2]):.2f}")
PY
done
echo "p,local_epoch,seed,rounds,rounds_s,allgather_s,check_s,checks,wall_s" > "$out/timing-check.csv"
for pe in "8 32" "2 128"; do
  set -- $pe
  t0=$(now)
  "$wulf" "${ppt[@]}" --np "$1" --local-epoch "$2" --error-window 4 --error mse --target-error 0.01 \
      --epochs 300 --seed 1 --out "$records/c-p$1-e$2.json" > /dev/null
  "$python" - "$records/c-p$1-e$2.json" "$(seconds_since "$t0")" >> "$out/timing-check.csv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["final"]["strategy"]
print(f"{r['config']['np']},{int(s['local_epoch'])},{r['config']['seed']},{int(s['rounds'])},{s['rounds_s']:.9f},"
      f"{s['allgather_s']:.9f},{s['check_s']:.9f},{int(s['checks'])},{float(sys.argv[2]):.2f}")
PY
done
cat "$out/timing.csv" "$out/timing-check.csv"
