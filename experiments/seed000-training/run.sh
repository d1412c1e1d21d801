#!/bin/bash
# Seed 000's training experiments (section VI, Figs. 6-10; section VII, Fig. 10), simulated
# with the real arithmetic: error against simulated time on Messner (Bat Cave for Fig. 7).
#
#   experiments/seed000-training/run.sh [fig6] [fig7] [fig7-messner] [fig8] [fig8-seeds] [fig10] [plots] [table]
#   BLOCK_STEP=sum OUT=experiments/seed000-training/block-step-sum experiments/seed000-training/run.sh fig7 ...
#
# With no argument it runs everything, one run after another (this machine has 2 cores
# shared with others). Each run writes records/<name>.json and records/<name>.log; each
# figure's wall time goes to wall-times.txt. `plots` draws the PNGs with `wulf plot` and
# `table` writes results.md from the records. WULF=path/to/wulf picks the binary;
# SCALE=0.01 OUT=/tmp/x shrinks every time budget, for a quick check of the script.
# Its arguments name figures, not a build folder: $root/build's wulf, unless WULF names one.
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" ""
wulf=${WULF:-$wulf}
scale=${SCALE:-1}
rec=$out/records
mkdir -p "$rec"
cd "$root"  # record platform paths relative to the repository

# Every run: the paper's clusters, seed 000's per-pattern times (Tables II, III) and its
# nets without biases (the profiles' w), 8-byte weights (Table V's Tw is per 8-byte
# weight), recursive doubling (section V), one seed.
common=(train --engine sim --compute calibrated --bias off --precision double --allreduce rdb --quiet)
seed=1  # the figures' seed; fig8-seeds runs 2 and 3
# BLOCK_STEP=sum re-simulates with a block's updates summed instead of averaged (the
# sensitivity check of README.md; with OUT=... to keep it apart from the figures).
[[ -n ${BLOCK_STEP:-} ]] && common+=(--block-step "$BLOCK_STEP")

budget() { "$python" -c "print(f'{$1 * $scale:g}')"; }
elapsed() { "$python" -c "print(f'{$2 - $1:.1f}')"; }

run() {  # run NAME ARGS...: one wulf train run, its record and its log
  local name=$1
  shift
  local t0
  t0=$(now)
  "$wulf" "${common[@]}" --seed "$seed" "$@" --out "$rec/$name.json" >"$rec/$name.log" 2>&1
  echo "  $name: $(elapsed "$t0" "$(now)") s wall" | tee -a "$rec/$name.log"
}

figure() {  # figure NAME FUNCTION: runs it, writes its wall time
  local t0
  t0=$(now)
  echo "$1 ($(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg))"
  "$2"
  local wall
  wall=$(elapsed "$t0" "$(now)")
  echo "$1: $wall s wall"
  echo "$1 $wall s wall, $(date -u +%FT%TZ), load at the end $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/wall-times.txt"
}

# Fig. 6: function on Messner, 1 processor at b = 4 against 2..16 at b = 64.
fig6() {
  local t
  t=$(budget 2000)
  local f=(--problem function --platform platforms/messner.xml --profile messner-function --epochs 1000000
           --max-seconds "$t" --history-every 10)
  run fig6-p1-b4 "${f[@]}" --np 1 --block 4
  for p in 2 4 8 16; do run "fig6-p$p-b64" "${f[@]}" --np "$p" --block 64; done
}

# Fig. 7: encoder on Bat Cave, 1 processor at b = 4 against 2, 4, 8 at b = 64; RMSE.
fig7() {
  local t
  t=$(budget 5000)
  local f=(--problem encoder --error rmse --platform platforms/batcave.xml --profile batcave-encoder
           --epochs 10000000 --max-seconds "$t" --history-every 50)
  run fig7-p1-b4 "${f[@]}" --np 1 --block 4
  for p in 2 4 8; do run "fig7-p$p-b64" "${f[@]}" --np "$p" --block 64; done
}

# The text after Fig. 7: the same on Messner with b = 32 for 4, 8, 16 processors.
fig7_messner() {
  local t
  t=$(budget 1000)
  local f=(--problem encoder --error rmse --platform platforms/messner.xml --profile messner-encoder
           --epochs 10000000 --max-seconds "$t" --history-every 20)
  run fig7m-p1-b4 "${f[@]}" --np 1 --block 4
  for p in 4 8 16; do run "fig7m-p$p-b32" "${f[@]}" --np "$p" --block 32; done
}

# digits_runs SUFFIX P...: digits on Messner for 2 000 s, 1 processor at b = 16 and each P
# at b = 200, the runs named fig8-p<P>-b<b><SUFFIX>.
digits_runs() {
  local suffix=$1 t
  shift
  t=$(budget 2000)
  local f=(--problem digits --platform platforms/messner.xml --profile messner-digits --epochs 100000
           --max-seconds "$t")
  run "fig8-p1-b16$suffix" "${f[@]}" --np 1 --block 16
  for p in "$@"; do run "fig8-p$p-b200$suffix" "${f[@]}" --np "$p" --block 200; done
}

# Figs. 8 and 9: digits on Messner, 1 processor at b = 16 against 2..16 at b = 200.
fig8() { digits_runs "" 2 4 8 16; }

# Figs. 8 and 9 with seeds 2 and 3 (initial weights and pattern order), p = 1, 2, 4, 8: how
# far apart the end points of one configuration lie.
fig8_seeds() {
  for seed in 2 3; do digits_runs "-s$seed" 2 4 8; done
  seed=1
}

# Fig. 10: digits with weight averaging, local b = 16, averaging every a = 300 patterns.
# The 1-processor reference is Fig. 8's.
fig10() {
  local t
  t=$(budget 2000)
  local f=(--problem digits --platform platforms/messner.xml --profile messner-digits --epochs 100000
           --max-seconds "$t" --strategy average --block 16 --average-interval 300)
  for p in 2 4 8 16; do run "fig10-p$p-b16-a300" "${f[@]}" --np "$p"; done
}

# plot PNG ARGS...: `wulf plot ARGS --out PNG`, skipped with a note when a record is missing
# (a partial run, e.g. the BLOCK_STEP=sum check of two figures).
plot() {
  local png=$1 a
  shift
  for a in "$@"; do
    if [[ $a == *.json && ! -f $a ]]; then
      echo "plots: $a missing, $png not drawn"
      return 0
    fi
  done
  "$wulf" plot "$@" --out "$out/$png"
}

plots() {
  local r=$rec
  plot fig6.png "$r"/fig6-p1-b4.json "$r"/fig6-p{2,4,8,16}-b64.json --log-error \
    --title "Fig. 6: function on Messner, test RMSE (simulated${BLOCK_STEP:+, block step $BLOCK_STEP})"
  plot fig7.png "$r"/fig7-p1-b4.json "$r"/fig7-p{2,4,8}-b64.json --error train --log-error \
    --title "Fig. 7: encoder on Bat Cave, RMSE (simulated${BLOCK_STEP:+, block step $BLOCK_STEP})"
  plot fig7-messner.png "$r"/fig7m-p1-b4.json "$r"/fig7m-p{4,8,16}-b32.json --error train --log-error \
    --title "Encoder on Messner, b = 32 in parallel (text after Fig. 7), RMSE (simulated)"
  plot fig8.png "$r"/fig8-p1-b16.json "$r"/fig8-p{2,4,8,16}-b200.json --error test-count \
    --title "Fig. 8: digits on Messner, test errors (simulated)"
  plot fig9.png "$r"/fig8-p1-b16.json "$r"/fig8-p{2,4,8,16}-b200.json --error test-count \
    --xlim "$(budget 1500):$(budget 2050)" --ylim 200:500 --title "Fig. 9: the last 500 s of Fig. 8"
  plot fig10.png "$r"/fig8-p1-b16.json "$r"/fig10-p{2,4,8,16}-b16-a300.json \
    --error test-count --title "Fig. 10: weight averaging (b = 16, a = 300) for digits on Messner (simulated)"
  plot fig8-log.png "$r"/fig8-p1-b16.json "$r"/fig8-p{2,4,8,16}-b200.json --error test-count \
    --log-time --title "Fig. 8 on a log time axis"
  plot fig8-seeds.png "$r"/fig8-p1-b16{,-s2,-s3}.json "$r"/fig8-p4-b200{,-s2,-s3}.json --error test-count \
    --labels "1 CPU, b = 16, seed "{1,2,3} "4 CPUs, b = 200, seed "{1,2,3} \
    --xlim "$(budget 1500):$(budget 2050)" --ylim 200:500 \
    --title "Fig. 9 over seeds 1, 2, 3: 1 CPU at b = 16 and 4 CPUs at b = 200"
}

table() { "$python" "$here/table.py" "$rec" >"$out/results.md"; }

[ $# -eq 0 ] && set -- fig8 fig8-seeds fig10 fig7 fig7-messner fig6 plots table
for what in "$@"; do
  case $what in
    fig6 | fig7 | fig8 | fig10) figure "$what" "$what" ;;
    fig7-messner) figure "$what" fig7_messner ;;
    fig8-seeds) figure "$what" fig8_seeds ;;
    plots) plots ;;
    table) table ;;
    *) echo "run.sh: unknown part '$what' (fig6, fig7, fig7-messner, fig8, fig8-seeds, fig10, plots, table)" >&2; exit 2 ;;
  esac
done
