#!/usr/bin/env bash
# Seeds 003 and 004, simulated. Compute is charged by flops on the platform's core speed
# (--compute flops); --ranks-per-host 1 puts each rank on a node of its own, as the papers'
# "nodes" are (the platforms' hosts have 6 and 16 cores).
#
# A. Seed 003: Andrew Ng's 400-25-10 sigmoid net (digits:20x20: MNIST resampled to 20x20),
#    the first 5 000 MNIST training images (Ng's ex4 set, which seed 003 trains on, is 5 000
#    MNIST digits), logistic (cross-entropy) cost, batch gradient descent, learning rate 2,
#    1 000 iterations, initial weights uniform in [-0.12, 0.12] (seed 003's code:
#    epsilon_init = 0.12), double precision (numpy's float64, MPI.DOUBLE in its Bcast), real
#    numerics; scatter/gather (--strategy scatter) on platforms/dt42.xml on 1 and 2 nodes;
#    seeds 1-3 on 1 node, seed 1 on 2 nodes. --eval-train on: the exact cost and precision
#    over the 5 000 training images after every iteration (seed 003's precision is on its
#    training set); the MNIST test set (10 000) is evaluated too.
# B. Seed 004: the softmax classifier with no hidden layer at 784 (28x28), 3 248 (56x58)
#    and 12 544 (112x112) pixels, 60 000 training images, one update per epoch, threads in
#    each rank and a root update (--strategy root: MPI_Reduce, update, MPI_Bcast) on
#    platforms/sorgan.xml: 1, 2, 4, 8, 10 nodes x 1, 2, 4, 8, 16 threads. Time only:
#    --numerics off, 3 epochs (every epoch costs the same).
# C. Seed 004's classifier at 784 pixels with real numerics, 100 epochs, learning rate 0.5
#    (wulf's default: the seed gives none), 4 nodes x 1 thread: the accuracy it reaches
#    (seed 004 reports none) and the simulated time of a whole run.
#
#   experiments/seed003-004/run.sh [build dir]
#   NUMERICS=off experiments/seed003-004/run.sh [build dir]
# NUMERICS=off runs A and C without the arithmetic (B never has it): the same simulated
# times in 1 s instead of 96 s, and no errors (experiments/seed003-004/check.py --times-only).
# Writes records/ (one JSON record per run), wall.txt (each run's wall time here), then
# prints the tables (table.py) into results.txt and draws seed003.png and seed004.png; into
# $OUT if set.
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
records="$out/records"
mkdir -p "$records"
walls="$out/wall.txt"
: > "$walls"
numerics=()
[ "${NUMERICS:-on}" = off ] && numerics=(--numerics off)
timed() {  # name command...
  local name=$1 t0
  shift
  t0=$(now)
  "$@" > /dev/null
  echo "$name $(seconds_since "$t0")" | tee -a "$walls"
}

# A. seed 003
for run in "1 1" "1 2" "1 3" "2 1"; do
  set -- $run
  np=$1 seed=$2
  timed "s003-np$np-s$seed" "$wulf" train --problem digits:20x20 --train-size 5000 --strategy scatter \
      --init-range 0.12 --precision double --error loss --eval-train on --seed "$seed" \
      --engine sim --np "$np" --ranks-per-host 1 --platform "$platforms/dt42.xml" --compute flops \
      "${numerics[@]}" --quiet --out "$records/s003-np$np-s$seed.json"
done

# B. seed 004, time only
softmax784=(--hidden none --output-activation softmax --loss ce --learning epoch --eta 0.5 --alpha 0)
for size in 28x28 56x58 112x112; do
  extra=()
  [ "$size" = 28x28 ] && extra=("${softmax784[@]}")
  for nodes in 1 2 4 8 10; do
    for threads in 1 2 4 8 16; do
      timed "s004-$size-n$nodes-t$threads" "$wulf" train --problem "digits:$size" "${extra[@]}" \
          --strategy root --threads "$threads" --epochs 3 --numerics off \
          --engine sim --np "$nodes" --ranks-per-host 1 --platform "$platforms/sorgan.xml" --compute flops \
          --quiet --out "$records/s004-$size-n$nodes-t$threads.json"
    done
  done
done

# C. seed 004 at 784 pixels with the arithmetic
timed "s004-28x28-n4-t1-numerics" "$wulf" train --problem digits "${softmax784[@]}" --epochs 100 \
    --strategy root --threads 1 --seed 1 "${numerics[@]}" \
    --engine sim --np 4 --ranks-per-host 1 --platform "$platforms/sorgan.xml" --compute flops \
    --quiet --out "$records/s004-28x28-n4-t1-numerics.json"

"$python" "$here/table.py" "$records" "$walls" "$out" | tee "$out/results.txt"
