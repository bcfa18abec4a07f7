#!/usr/bin/env bash
# Builds memfit and its whole test suite with AddressSanitizer + UndefinedBehaviorSanitizer and
# runs every test under them. Any report fails the run: UBSan halts on the first error, ASan on the
# first bad access, LeakSanitizer at exit.
# The tree is the clang one the fuzzers use (build-fuzz, MEMFIT_FUZZ=ON: ASan + UBSan everywhere),
# so CI compiles the sanitized library once for both. For a g++ sanitizer build instead:
#   cmake -S . -B build-asan -DMEMFIT_SANITIZE=ON && cmake --build build-asan
# Usage: scripts/sanitize.sh          (build dir: $FUZZ_BUILD, default build-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout, so a clone in another folder (CI) reuses what
# an earlier build of the same sources compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
build="${FUZZ_BUILD:-build-fuzz}"
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMEMFIT_FUZZ=ON -DMEMFIT_BUILD_TESTS=ON -DMEMFIT_BUILD_BENCH=OFF -DMEMFIT_WERROR=ON >/dev/null
cmake --build "$build" -j "${FUZZ_JOBS:-2}" --target memfit memfit_tests
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir "$build" --output-on-failure -j2
