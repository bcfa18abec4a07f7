#!/usr/bin/env bash
# CTest entry for the wasm engine's tests: the Node parity test (parity.test.mjs) and, with
# Chromium and playwright-core, the static site in a browser (site.test.mjs). Skips (exit 77) with
# a reason when the site is not built (scripts/build-site.sh; scripts/test.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/../.."
export MEMFIT_ENGINE_DIR="${MEMFIT_ENGINE_DIR:-$PWD/build-site/site}"
if [ ! -f "$MEMFIT_ENGINE_DIR/memfit_engine.wasm" ]; then
  echo "SKIP: $MEMFIT_ENGINE_DIR has no memfit_engine.wasm (run scripts/build-site.sh)"; exit 77
fi
tests=(tests/wasm/parity.test.mjs)
if [ "${1:-}" = "--browser" ]; then
  if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then echo "SKIP: Debian's chromium is not installed"; exit 77; fi
  if [ ! -d tests/browser/node_modules/playwright-core ]; then echo "SKIP: run npm ci in tests/browser"; exit 77; fi
  tests=(tests/wasm/site.test.mjs)
fi
exec node --test "${tests[@]}"
