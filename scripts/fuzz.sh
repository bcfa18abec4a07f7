#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/*_fuzz.cc) with clang, ASan and UBSan, writes each target's
# seed corpus (built from the tests' fixture builders) and runs each target for a while.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]      (default 30 s, every target)
# Environment: FUZZ_BUILD (build dir, default build-fuzz), FUZZ_JOBS (ninja -j, default 2),
#   FUZZ_ARGS (extra libFuzzer flags, e.g. "-runs=5000000").
# Findings (crash-*, leak-*, timeout-*, oom-*) are written to $FUZZ_BUILD/findings/<target>/;
# the script exits 1 if any target fails. See docs/security.md.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout, so a clone in another folder (CI) reuses what
# an earlier build of the same sources compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
seconds="${1:-30}"
shift || true
build="${FUZZ_BUILD:-build-fuzz}"

CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMEMFIT_FUZZ=ON -DMEMFIT_BUILD_TESTS=ON -DMEMFIT_BUILD_BENCH=OFF -DMEMFIT_WERROR=ON \
  >/dev/null  # as scripts/sanitize.sh
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  for src in fuzz/*_fuzz.cc; do targets+=("$(basename "$src" .cc)"); done
fi
cmake --build "$build" -j "${FUZZ_JOBS:-2}" --target "${targets[@]}"

failed=0
for target in "${targets[@]}"; do
  seeds="$build/seeds/$target"
  corpus="$build/corpus/$target"
  findings="$build/findings/$target"
  rm -rf "$seeds"
  mkdir -p "$corpus" "$findings"
  MEMFIT_FUZZ_WRITE_SEEDS="$seeds" "$build/$target"
  dict=()
  if [ -f "fuzz/$target.dict" ]; then dict=(-dict="fuzz/$target.dict"); fi
  # New inputs go to $corpus; the seeds are read only. -timeout: no input may take 10 s;
  # -rss_limit_mb / -malloc_limit_mb: the process and any single allocation stay under 2 GiB.
  echo "== $target: ${seconds}s"
  if ! "$build/$target" "$corpus" "$seeds" "${dict[@]}" -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="$findings/" -print_final_stats=1 ${FUZZ_ARGS:-} \
      >"$build/$target.log" 2>&1; then
    echo "FAILED: $target (log: $build/$target.log, inputs: $findings/)"
    # What failed and the input that did it (base64), then the last lines of progress.
    grep -E "invariant violated|ERROR:|SUMMARY:|ALARM:|out-of-memory|Base64:|Test unit written" \
      "$build/$target.log" | cut -c1-2000 || true
    grep -A 12 -E "^==[0-9]+==ERROR|ERROR: libFuzzer" "$build/$target.log" | head -n 14 || true
    tail -n 5 "$build/$target.log"
    failed=1
  else
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)" \
      "$build/$target.log" || true
  fi
done
exit "$failed"
