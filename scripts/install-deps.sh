#!/usr/bin/env bash
# Installs everything memfit needs to build and test on Debian 12, as root or with sudo.
# Usage: scripts/install-deps.sh [--test]   (--test adds what the test suite needs beyond the build)
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

BUILD_PACKAGES=(
  g++ cmake ninja-build ccache pkg-config
  nlohmann-json3-dev libsimdjson-dev libcli11-dev libfmt-dev
  libcurl4-openssl-dev libssl-dev
  libboost-dev  # Boost.Beast and Boost.Asio (header-only): the server's transport
  pybind11-dev python3-dev  # the Python module (cmake/python.cmake), for Debian's python3
  help2man dpkg-dev  # the .deb: man page from --help, dpkg-shlibdeps for Depends (build-deb.sh)
)
TEST_PACKAGES=(
  libgtest-dev libgmock-dev libbenchmark-dev python3
  python3-pytest python3-pandas  # python/tests (CTest python_tests, Result.to_pandas), /usr/bin/python3
  python3-build python3-setuptools python3-wheel python3-venv  # the wheel (scripts/build-python.sh)
  lintian file  # tests/package/deb_test.sh checks the .deb
  libcpp-httplib-dev  # the fake Hub and test clients (tests/fake_hub.cc, src/server/*_test.cc)
  wrk  # bench/server_load.sh
  clang libclang-rt-14-dev  # scripts/fuzz.sh: libFuzzer targets (docs/security.md)
  emscripten node-acorn  # scripts/build-site.sh: the engine in WebAssembly, the static site
)

packages=("${BUILD_PACKAGES[@]}")
if [ "${1:-}" = "--test" ]; then
  packages+=("${TEST_PACKAGES[@]}")
fi

# Node.js and npm only fetch the web page's charting library; any installed node will do.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The web page's charting library and the bundler that makes its modules one file (npm, pinned in
# web/package-lock.json), both used at build time.
if [ ! -f web/node_modules/chart.js/dist/chart.umd.js ] || [ ! -x web/node_modules/.bin/esbuild ]; then
  (cd web && npm ci --no-audit --no-fund --include=dev --loglevel=error)
fi
