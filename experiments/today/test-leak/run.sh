#!/bin/sh
# SimGrid 3.32's cost of requests completed by MPI_Test: the same ring of messages on 16 ranks
# (2 DGX-1 servers), completed by MPI_Wait (wait), by MPI_Test (test), by MPI_Waitany with a
# self-message (waitany-self), or as s4u comms tested by Comm::wait_any_for (s4u); see
# ring_test.cpp. Prints wall seconds per 1 000 rounds, the simulated time and the peak memory
# of each run (about 20 s in all on 2 cores).
# Usage: experiments/today/test-leak/run.sh [ROUNDS [early]]   (default 4000; early: each request
# is also tested once right after posting, when it is not done yet)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/wulf-test-leak.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
python3 "$here/../../../platforms/gpu/generate.py" --preset dgx1-v100 --nodes 2 -o "$work/dgx1-2.xml" 2>/dev/null
grep -o '<host id="[^"]*"' "$work/dgx1-2.xml" | cut -d'"' -f2 > "$work/hosts"
smpicxx -std=gnu++17 -O2 "$here/ring_test.cpp" -o "$work/ring_test"
for mode in wait test waitany-self s4u; do
  /usr/bin/time -f "$mode: %e s wall, %M KB peak memory" \
    smpirun -np 16 -platform "$work/dgx1-2.xml" -hostfile "$work/hosts" --cfg=smpi/test:0 --cfg=smpi/wtime:0 \
      --cfg=smpi/simulate-computation:no --log=root.thres:error "$work/ring_test" "$mode" "${1:-4000}" "${2:-}" 2>&1 |
    grep -v '^\[' || true
done
