#!/usr/bin/env bash
# The Debian package, built from this build's binary and checked without installing it:
# cpack into a temp dir, dpkg-deb -x into a temp root, run its usr/bin/memfit, look for the man
# page, the completion, the docs and the Depends; lintian (when installed) must report no error.
# Usage: tests/package/deb_test.sh BUILD_DIR VERSION   (exit 77: a tool is missing, skipped)
set -euo pipefail
build=$1
version=$2
for tool in cpack dpkg-deb dpkg-shlibdeps help2man; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool not found (apt-get install dpkg-dev help2man)"
    exit 77
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cpack --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1 || {
  cat "$tmp/cpack.log"; exit 1; }
arch=$(dpkg --print-architecture)
deb="$tmp/out/memfit_${version}_${arch}.deb"
[ -f "$deb" ] || { echo "FAIL: no $deb"; ls "$tmp/out"; exit 1; }
dpkg-deb -x "$deb" "$tmp/root"
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$tmp/root/usr/bin/memfit" ] || fail "usr/bin/memfit missing"
[ -s "$tmp/root/usr/share/man/man1/memfit.1.gz" ] || fail "man page missing"
zcat "$tmp/root/usr/share/man/man1/memfit.1.gz" | grep -q '^\.SS "memfit estimate-memory"' ||
  fail "man page has no section for estimate-memory"
[ -s "$tmp/root/usr/share/bash-completion/completions/memfit" ] || fail "bash completion missing"
[ -s "$tmp/root/usr/share/doc/memfit/copyright" ] || fail "copyright missing"
[ -s "$tmp/root/usr/share/doc/memfit/changelog.gz" ] || fail "changelog.gz missing"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libcurl libfmt libsimdjson libstdc++6 libc6; do
  [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib: $depends"
done
if file "$tmp/root/usr/bin/memfit" | grep -q 'not stripped'; then fail "usr/bin/memfit not stripped"; fi
# The packaged binary answers, offline, in an empty home (no cache, no network).
out=$(env -i PATH=/usr/bin:/bin HOME="$tmp/home" HF_HUB_OFFLINE=1 \
      "$tmp/root/usr/bin/memfit" estimate-memory bert-base-cased --format json)
[[ $out == *'"schema": "memfit.estimate-memory/1"'* || $out == *'"schema":"memfit.estimate-memory/1"'* ]] ||
  fail "estimate-memory bert-base-cased: $out"
# The completion offers the commands and a command's flags, read from the packaged binary.
words=$(PATH="$tmp/root/usr/bin:$PATH" bash -c \
  "source '$tmp/root/usr/share/bash-completion/completions/memfit'; _memfit_words memfit; _memfit_words memfit inference")
for w in estimate-memory inference fit --context --engine; do
  grep -qx -- "$w" <<<"$words" || fail "completion lacks $w"
done
if command -v lintian >/dev/null 2>&1; then
  lintian --tag-display-limit 0 "$deb" >"$tmp/lintian.log" 2>&1 || true
  cat "$tmp/lintian.log"
  if grep -q '^E:' "$tmp/lintian.log"; then fail "lintian reports errors"; fi
fi
echo "OK: $(basename "$deb"), Depends: $depends"
