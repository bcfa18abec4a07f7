#!/usr/bin/env bash
# Builds memfit and its whole test suite with AddressSanitizer + UndefinedBehaviorSanitizer
# (MEMFIT_SANITIZE=ON, -O1 to keep CI fast) and runs every test under them. Any report fails the
# run: UBSan halts on the first error, ASan on the first bad access, LeakSanitizer at exit.
# Usage: scripts/sanitize.sh          (build dir: $SANITIZE_BUILD, default build-asan)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${SANITIZE_BUILD:-build-asan}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
  -DMEMFIT_SANITIZE=ON -DMEMFIT_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "${SANITIZE_JOBS:-2}" --target memfit memfit_tests
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir "$build" --output-on-failure -j2
