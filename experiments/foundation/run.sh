#!/usr/bin/env bash
# Re-runs the four learning checks of the foundation issue and keeps what they printed.
# Usage: experiments/foundation/run.sh [build dir]   (about 2 minutes on one core)
# shellcheck source=SCRIPTDIR/../common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"
cd "$here"
run() {  # name, then wulf arguments
  local name=$1; shift
  echo "\$ wulf $*" > "$name.log"
  # Progress lines of iterations 0-5, every 1000th, and the summary.
  "$wulf" "$@" --out "$name.json" |
    awk '/^iter/ { shown = ($2 <= 5 || $2 % 1000 == 0); if (shown) print; last = $0; next }
         { if (last != "" && !shown) print last; last = ""; print }' >> "$name.log"
}
run digits train --problem digits
run encoder train --problem encoder --error class --target-error 0
run parity train --problem parity --error class --target-error 0
run function train --problem function
run digits-nobias train --problem digits --bias off
