# What every experiment's script starts with. Each sources it first, passing its build
# folder argument on:
#   source "$(dirname "${BASH_SOURCE[0]}")/../common.sh" "$@"      # [build dir] [...]
# It stops the script at the first failing command, and sets
#   here            the sourcing script's folder
#   out             where its records and results go: $OUT, else $here (the CTest checks,
#                   experiments/*/check.py, run a script into a temporary folder this way)
#   root            the repository
#   build, wulf     the build folder (the first argument, else $root/build) and its wulf
#   platforms       $root/platforms; test_platforms: $root/tests/platforms
#   python          Debian's python3, which has python3-matplotlib (a python3 earlier on PATH
#                   may lack it)
# and the functions now and seconds_since T0 (wall-clock seconds, as bc prints them), and
# forget_runs FILE REGEX.
# shellcheck shell=bash disable=SC2034  # the variables are for the scripts that source it
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
out="${OUT:-$here}"
mkdir -p "$out"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/build}"
wulf="$build/wulf"
platforms="$root/platforms"
test_platforms="$root/tests/platforms"
python=/usr/bin/python3
# Open MPI refuses to start as root without this consent (wulf gives it to the mpirun it
# starts; this is for the scripts that start mpirun themselves).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

now() { date +%s.%N; }
seconds_since() { echo "$(now) - $1" | bc; }
# forget_runs FILE REGEX: removes from the runs file FILE (made if missing) the lines that
# match REGEX, the runs about to be measured again; the others' figures stay.
forget_runs() {
  local kept
  kept=$(mktemp)
  touch "$1"
  grep -v -E "$2" "$1" > "$kept" || true
  cat "$kept" > "$1"
  rm -f "$kept"
}
