#!/usr/bin/env bash
# Scale (issue 4, item 8): one iteration of seed 002's JOCR net 400-480-3203 (float, no
# bias: the 1 729 440 weights of its reduce) with --numerics off on 196 Bunyip CPUs:
# gradients of 32 000 patterns per rank charged at the platform's 1 090 Mflop/s, reduce to
# the master, broadcast back (--strategy root, learning by epoch). Target: under 30 s of
# wall time and 4 GB of resident memory. Measured with /usr/bin/time (peak resident set of
# the largest process, smpirun's), for SMPI's default reduce, for the binomial reduce the
# platform is calibrated with (SMPI's), for the same binomial tree made of wulf's own
# point-to-point messages (wulf-binomial), and for seed 002's four-stage reduce.
#   experiments/bunyip-scale/run.sh [build dir]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
platform="$platforms/bunyip.xml"
{
  echo "JOCR 400-480-3203 float, 196 ranks on bunyip.xml, numerics off, one iteration of 6 272 000 patterns"
  for algorithms in "default default" "binomial binomial" "wulf-binomial binomial" "four-stage binomial"; do
    set -- $algorithms
    /usr/bin/time -f "%e %M" -o "$here/time.txt" "$wulf" train --problem chars:3203 --train-size 6272000 \
      --bias off --precision float --engine sim --np 196 --platform "$platform" --strategy root \
      --learning epoch --numerics off --epochs 1 --reduce "$1" --bcast "$2" --quiet \
      --out "$here/record-$1.json" > /dev/null
    read -r wall rss < "$here/time.txt"
    "$python" - "$here/record-$1.json" "$1" "$wall" "$rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
q = r["phases"]["ranks"][0]
wall, rss = float(sys.argv[3]), int(sys.argv[4]) / 1024 / 1024
print(f"  reduce/bcast {sys.argv[2]:>13}: simulated {r['final']['time_s']:7.1f} s "
      f"(compute {q['forward_s'] + q['backward_s']:.1f} s, communication {q['comm_s']:.1f} s); "
      f"wall {wall:.2f} s ({'met' if wall < 30 else 'NOT met'}), "
      f"resident {rss:.2f} GB ({'met' if rss < 4 else 'NOT met'})")
PY
  done
} | tee "$here/results.txt"
rm -f "$here/time.txt"
