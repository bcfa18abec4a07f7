#!/usr/bin/env bash
# CTest entry for the browser tests: skips (exit 77) with a reason when Chromium or playwright-core
# is missing; scripts/test.sh installs both.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then echo "SKIP: Debian's chromium is not installed"; exit 77; fi
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/axe-core ]; then echo "SKIP: run npm ci in tests/browser"; exit 77; fi
# The server must not reach the network: a closed loopback Hub endpoint, caches in a temp dir.
export HF_ENDPOINT=http://127.0.0.1:9
HF_HOME="$(mktemp -d)"; export HF_HOME
export MEMFIT_CACHE="$HF_HOME/memfit"
exec node --test --test-concurrency=1 page.test.mjs answers.test.mjs
