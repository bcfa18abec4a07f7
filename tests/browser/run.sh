#!/usr/bin/env bash
# CTest entry for the browser tests: skips (exit 77) with a reason when Chromium or playwright-core
# is missing; scripts/test.sh installs both.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then echo "SKIP: Debian's chromium is not installed"; exit 77; fi
if [ ! -d node_modules/playwright-core ]; then echo "SKIP: run npm ci in tests/browser"; exit 77; fi
exec node --test page.test.mjs
