#!/usr/bin/env bash
# An installed wulf runs on its own: `cmake --install` into a temporary prefix, the prefix
# moved to another folder (nothing in it may point at where it was installed), and from a
# folder outside the source and build trees the moved wulf reads an installed platform
# (wulf-platform), finds an installed profile by name, trains on the simulator (smpirun
# loading the installed wulf-rank-sim, whose ranks find the profile too) and draws the
# record (the installed wulf_plot.py).
# An installed wulf never falls back to the build tree (core/util/paths.hpp), so a piece
# missing from the install fails its step.
#   tests/install_test.sh BUILD_DIR CMAKE BINDIR DATADIR PLOT_PYTHON
# BINDIR and DATADIR are the install's folders relative to the prefix (bin, share/wulf);
# PLOT_PYTHON is empty when no Python with matplotlib was found: every step but the drawing
# runs, then the test reports itself skipped (77).
set -euo pipefail
source "$(dirname "$0")/skip.sh"
build="$(cd "$1" && pwd)"
cmake="$2" bindir="$3" datadir="$4" plot_python="$5"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$cmake" --install "$build" --prefix "$tmp/installed" > "$tmp/install.log"
mv "$tmp/installed" "$tmp/moved"
prefix="$tmp/moved"
wulf="$prefix/$bindir/wulf"
platform="$prefix/$datadir/platforms/batcave.xml"
mkdir "$tmp/work"
cd "$tmp/work"

expect() {  # expect TEXT FILE: fails unless FILE holds TEXT
  grep -qF -- "$1" "$2" || { echo "expected '$1' in:"; cat "$2"; exit 1; }
}
"$wulf" platform info "$platform" > info.txt
expect "platform $platform: 8 hosts" info.txt
"$wulf" model --profile batcave-function > model.txt
expect "profile $prefix/$datadir/platforms/profiles/batcave-function.profile" model.txt
"$wulf" train --problem encoder --epochs 2 --engine sim --np 2 --platform "$platform" --out r.json > train.txt
expect '"engine": "sim"' r.json
"$wulf" train --problem encoder --bias off --epochs 2 --engine sim --np 2 --platform "$platform" \
  --compute calibrated --profile batcave-encoder --out calibrated.json > calibrated.txt
expect "\"profile\": \"$prefix/$datadir/platforms/profiles/batcave-encoder.profile\"" calibrated.json
"$wulf" plot --help > plot-help.txt
expect "$prefix/$datadir/wulf_plot.py" plot-help.txt
if [ -z "$plot_python" ]; then
  skip "no Python 3 with matplotlib: wulf plot not run"
fi
"$wulf" plot r.json --error train --out r.png > plot.txt
[ -s r.png ] || { echo "wulf plot wrote no r.png"; exit 1; }
echo "the installed wulf, moved to $prefix, ran platform info, model, train --engine sim and plot"
