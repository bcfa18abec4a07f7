#!/usr/bin/env bash
# The wheel, built from this build's Python package (scripts/build-python.sh) and installed with
# pip --no-index into a fresh venv: it imports outside the source tree, answers, has its type
# stubs, and python -m memfit runs the CLI.
# Usage: tests/package/wheel_test.sh BUILD_DIR VERSION   (exit 77: a tool is missing, skipped)
set -euo pipefail
build=$1
version=$2
source_dir="$(cd "$(dirname "$0")/../.." && pwd)"
if ! /usr/bin/python3 -c 'import build, setuptools, wheel, venv, ensurepip' 2>/dev/null; then
  echo "SKIP: python3-build, python3-setuptools, python3-wheel or python3-venv missing"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
MEMFIT_WHEEL_OUT="$tmp/out" "$source_dir/scripts/build-python.sh" "$build" >/dev/null
wheels=("$tmp"/out/dist/memfit-"$version"-cp3*-linux_*.whl)
[ -f "${wheels[0]}" ] || { echo "FAIL: no wheel in $tmp/out/dist"; ls "$tmp/out/dist"; exit 1; }
/usr/bin/python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-index "${wheels[0]}"
cd "$tmp"
export HOME="$tmp/home" HF_HUB_OFFLINE=1 HF_ENDPOINT=http://127.0.0.1:9
"$tmp/venv/bin/python" - <<'PY'
import os, memfit
assert "site-packages" in memfit.__file__, memfit.__file__
assert os.path.exists(os.path.join(os.path.dirname(memfit.__file__), "__init__.pyi"))
assert os.path.exists(os.path.join(os.path.dirname(memfit.__file__), "py.typed"))
r = memfit.estimate_memory("bert-base-cased")
assert r["schema"] == "memfit.estimate-memory/1" and r["parameters"] > 100_000_000, r.to_dict()
PY
"$tmp/venv/bin/python" -m memfit estimate-memory bert-base-cased --format json | grep -q '"schema"'
echo "OK: $(basename "${wheels[0]}") ($(du -k "${wheels[0]}" | cut -f1) KiB)"
