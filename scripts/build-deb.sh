#!/usr/bin/env bash
# Writes build-deb/memfit_<version>_<arch>.deb with CPack (cmake/package.cmake): /usr/bin/memfit
# (stripped), its man page (help2man), bash completion, docs; Depends from dpkg-shlibdeps. It
# packs the binary of an existing build (the build dir scripts/test.sh uses) and builds it first
# only when needed. Then: lintian build-deb/memfit_*.deb
# Usage: scripts/build-deb.sh [BUILD_DIR]   (default: build; configured if absent)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
nice cmake --build "$build" --target memfit memfit_man memfit_changelog
rm -rf build-deb
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cpack --config "$build/CPackConfig.cmake" -B build-deb >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
rm -rf build-deb/_CPack_Packages
ls build-deb/memfit_*.deb
