#!/usr/bin/env bash
# Builds the static site: memfit's engine compiled to WebAssembly (emscripten, cmake/wasm_engine.cmake)
# and the page in its static mode, into build-site/site/ (index.html, the JS, the .wasm, a README
# with the static Hugging Face Space front matter). Any static file server can host that folder.
# Usage: scripts/build-site.sh [OUT_DIR]   (default build-site/site; the wasm build is build-wasm/)
# Needs Debian's emscripten and node-acorn (scripts/install-deps.sh --test) and web/node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout, so a clone in another folder (CI) reuses what
# an earlier build of the same sources compiled.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
out="${1:-build-site/site}"
if ! command -v emcmake >/dev/null 2>&1; then
  echo "build-site: emscripten not installed (apt-get install emscripten node-acorn)" >&2
  exit 1
fi
# Debian's emscripten runs its JS optimizer with the system node, which finds acorn here.
export NODE_PATH=/usr/share/nodejs
# -O2, no debug info; ccache (the top-level CMakeLists.txt's launcher) makes a rebuild cheap.
if [ ! -f build-wasm/build.ninja ]; then
  emcmake cmake -S . -B build-wasm -G Ninja -DMEMFIT_WASM=ON -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" >/dev/null
fi
CCACHE_DEPEND=1 cmake --build build-wasm --target memfit_engine

esbuild=web/node_modules/.bin/esbuild
if [ ! -x "$esbuild" ]; then
  (cd web && npm ci --no-audit --no-fund --include=dev --loglevel=error)
fi
rm -rf "$out"
mkdir -p "$out/vendor"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
# The page: the same bundle and inlining as the binary's (CMakeLists.txt), plus the meta tag that
# makes web/api.js answer through the engine's worker instead of api/v1/.
"$esbuild" web/app.js --bundle --format=esm --target=es2020 --minify --log-level=warning \
  --outfile="$stage/app.js"
sed 's|<head>|<head>\n<meta name="memfit-engine" content="worker.mjs">|' web/index.html > "$stage/index.html"
cmake -DHTML="$stage/index.html" -DCSS=web/style.css -DJS="$stage/app.js" -DOUTPUT="$out/index.html" \
  -P cmake/inline_page.cmake
grep -q 'name="memfit-engine"' "$out/index.html" || { echo "build-site: no <head> in web/index.html" >&2; exit 1; }
cp site/engine.mjs site/worker.mjs build-wasm/memfit_engine.mjs build-wasm/memfit_engine.wasm "$out/"
cp web/node_modules/chart.js/dist/chart.umd.js "$out/vendor/"
cat > "$out/README.md" <<'README'
---
title: memfit
emoji: 🧮
colorFrom: blue
colorTo: green
sdk: static
app_file: index.html
pinned: false
---

# memfit in the browser

How much memory a model needs to load, serve and train, and on which hardware it fits: memfit's
estimator compiled to WebAssembly, running in this tab. Catalog models answer offline; Hub models
are read from the Hub with HTTP range requests (config.json and the weight headers, never the
weights); local files (a config.json, a folder, .safetensors or .gguf files) are read in the tab
and never uploaded.

## Hosting
This folder is the whole site: serve it with any static file server (the engine is a module
worker, so open it over http(s), not file://).
- Locally: `python3 -m http.server -d . 8000`, then open http://127.0.0.1:8000/.
- GitHub Pages: push the folder's files to the branch Pages serves.
- A Hugging Face Space: create a Space with the "Static" SDK and upload these files (this
  README's front matter declares `sdk: static`).
A Hub token typed on the page stays in the tab's sessionStorage and goes only to the Hub.
README
echo "site written to $out ($(du -sh "$out" | cut -f1))"
