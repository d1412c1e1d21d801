#!/usr/bin/env bash
# Issue 7 item 5: one time-to-error experiment on this machine, real against simulated.
# Seed 003's net (digits:20x20, 400-25-10, no biases, float) learns by blocks of b = 256
# patterns on all 60 000 MNIST images, p = 1 and 2, until the test error (share of the
# 10 000 test images misclassified) is at most 5%, at most 40 iterations. Each p runs:
#   1. wulf calibrate at the block each rank works with (b / p): this machine's per-pattern
#      times (the profile) and its platform (the allreduce fit, platforms/generated/);
#   2. wulf train --engine real (mpirun) -- the measured curve;
#   3. wulf train --engine sim on that platform with --compute calibrated -- the simulated one.
# Both engines do the same arithmetic (same seed), so the errors of an iteration agree and
# only the time axis can differ. Run it on an otherwise idle machine (experiments/validate).
#   experiments/real-vs-sim/run.sh [build dir]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
mkdir -p "$here/records"
problem=digits:20x20
b=256
common=(--problem "$problem" --bias off --precision float --learning block --block "$b" --epochs 40
        --target-error 0.05 --error class --seed 1 --quiet)
uptime > "$here/records/load-before.txt"
start=$(date +%s)
for p in 1 2; do
  "$wulf" calibrate --problem "$problem" --block $((b / p)) --precision float --bias off --np 2 \
    --machine "this-machine-b$((b / p))" --profile-out "$here/records/b$((b / p)).profile" \
    --platform-out "$here/records/this-machine-b$((b / p)).xml" > "$here/records/calibrate-p$p.txt"
  "$wulf" train "${common[@]}" --engine real --np "$p" --out "$here/records/real-p$p.json" > /dev/null
  "$wulf" train "${common[@]}" --engine sim --np "$p" --platform "$here/records/this-machine-b$((b / p)).xml" \
    --compute calibrated --profile "$here/records/b$((b / p)).profile" --out "$here/records/sim-p$p.json" > /dev/null
done
echo "$(( $(date +%s) - start ))" > "$here/records/wall_s.txt"

"$wulf" plot "$here/records/real-p1.json" "$here/records/sim-p1.json" "$here/records/real-p2.json" \
  "$here/records/sim-p2.json" --labels "real (mpirun), p = 1" "simulated, p = 1" "real (mpirun), p = 2" \
  "simulated, p = 2" --title "digits:20x20, b = 256: real against simulated on this machine" \
  --out "$here/curves.png" > /dev/null
"$python" "$here/table.py" "$here" | tee "$here/results.txt"
