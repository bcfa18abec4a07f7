#!/usr/bin/env bash
# Installs test dependencies, builds memfit and runs the whole test suite (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout, so a clone in another folder (CI) reuses what
# an earlier build of the same sources compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
scripts/install-deps.sh --test
# Browser tests: Debian's Chromium, playwright-core and axe-core (npm, pinned in tests/browser).
if ! command -v chromium >/dev/null 2>&1; then
  $( [ "$(id -u)" -ne 0 ] && echo sudo ) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
fi
if [ ! -d tests/browser/node_modules/playwright-core ] || [ ! -d tests/browser/node_modules/axe-core ]; then
  (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
fi
# -O2 without debug info: the tests need the optimiser's code, not a debugger's tables, and g++'s
# -g costs about 40% more compile time (a RelWithDebInfo build is `cmake -B build-dbg`).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
  -DMEMFIT_WERROR=ON
cmake --build build
# The static site (the engine in WebAssembly): tests/wasm/ compares it with the native API.
scripts/build-site.sh
ctest --test-dir build --output-on-failure -j2
