#!/usr/bin/env bash
# How fast `wulf platform info` reads a large platform (issue 31, item 9), beside a short
# training run on the same platform: a flat cluster of HOSTS hosts (default 100 000), each
# on its own link to a backbone. Wall seconds and the largest resident set (GNU time's
# %e and %M: the largest of wulf's processes, wulf-platform included), one run each.
# Target: info takes no longer than the training run (which reads the platform too).
#   experiments/platform-info-speed/run.sh [build dir] [hosts]
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
hosts="${2:-100000}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
platform="$work/cluster-$hosts.xml"
cat > "$platform" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="big" prefix="n-" suffix="" radical="0-$((hosts - 1))" speed="1Gf" core="1"
             bw="125MBps" lat="50us" bb_bw="1.25GBps" bb_lat="10us"/>
  </zone>
</platform>
XML
measure() {  # "wall_s max_rss_kB" of "$@"
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > /dev/null
  cat "$work/time"
}
read -r info_s info_kb < <(measure "$wulf" platform info "$platform" --out "$work/info.json")
read -r train_s train_kb < <(measure "$wulf" train --problem encoder:8 --block 4 --epochs 1 --engine sim --np 2 \
  --platform "$platform" --quiet)
# (a build before issue 31 records no count: "?")
looked_up=$("$python" -c 'import json, sys
routes = json.load(open(sys.argv[1]))["platform"]["routes"]
print(sum(r["routes_looked_up"] for r in routes) if all("routes_looked_up" in r for r in routes) else "?")' \
  "$work/info.json")
awk -v n="$hosts" -v is="$info_s" -v ik="$info_kb" -v ts="$train_s" -v tk="$train_kb" -v lu="$looked_up" 'BEGIN {
  printf "a flat cluster of %d hosts, wall seconds and largest resident set:\n", n
  printf "  wulf platform info                      %8.2f s %8.0f MiB   (%s routes looked up)\n", is, ik / 1024, lu
  printf "  wulf train --engine sim --np 2 (encoder) %7.2f s %8.0f MiB\n", ts, tk / 1024
  printf "info against the training run: %.2fx the time (target <= 1: %s)\n", is / ts, is <= ts ? "met" : "NOT met"
}' | tee "$out/results.txt"
