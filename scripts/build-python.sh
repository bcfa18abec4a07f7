#!/usr/bin/env bash
# Writes the wheel build-python/dist/memfit-<version>-cp311-cp311-linux_<arch>.whl from this
# repository with Debian's python3-build, python3-setuptools and python3-wheel (no PyPI): the
# extension comes from the CMake build (the build dir scripts/test.sh uses, so nothing is compiled
# twice), stripped, with the package's Python files and type stubs.
# Usage: scripts/build-python.sh [BUILD_DIR]   (default: build; configured if absent;
#        MEMFIT_WHEEL_OUT=DIR writes DIR/dist instead of build-python/dist)
# Then: python3 -m venv v && v/bin/pip install --no-index build-python/dist/memfit-*.whl
# The wheel links Debian 12's libcurl, libfmt and libsimdjson: it is for Debian 12's Python 3.11.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
python=/usr/bin/python3
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
nice cmake --build "$build" --target memfit_python_package
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || { echo "build-python.sh: no project version in $build/CMakeCache.txt" >&2; exit 1; }
[ -d "$build/python/memfit" ] || {
  echo "build-python.sh: $build/python/memfit missing (pybind11-dev and python3-dev installed?)" >&2
  exit 1
}
out=${MEMFIT_WHEEL_OUT:-build-python}
stage=$out/stage
rm -rf "$stage" "$out/dist"
mkdir -p "$stage"
cp python/setup.py python/pyproject.toml README.md "$stage/"
cp -r "$build/python/memfit" "$stage/memfit"
rm -rf "$stage/memfit/__pycache__"
strip --strip-unneeded "$stage"/memfit/_memfit*.so
MEMFIT_VERSION=$version "$python" -m build --wheel --no-isolation --outdir "$out/dist" "$stage" \
  >"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 1; }
rm -rf "$stage"
ls "$out"/dist/memfit-"$version"-*.whl
