# How a shell test says it cannot run here (sourced). CTest counts exit 77 as skipped
# (SKIP_RETURN_CODE). Under CI=true (the CI machine, .ci/run) a skip is a failure: the CI machine
# has root, namespaces, tc's tbf, objdump, FANN, Python with matplotlib and PyTorch (./dev.sh
# test installs them), so a skip there is a test that did not run. skip_anywhere is for a reason
# that holds on the CI machine too. docs/development.md lists every skip and where it happens.

skip() {  # REASON
  if [ "${CI:-}" = true ]; then
    echo "FAILED: skipped under CI=true, where it must run: $1"
    exit 1
  fi
  echo "SKIPPED: $1"
  exit 77
}

skip_anywhere() {  # REASON
  echo "SKIPPED: $1"
  exit 77
}
