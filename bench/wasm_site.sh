#!/usr/bin/env bash
# The static site's targets (docs/benchmarks.md, "The engine in the browser"): the compressed size
# of what a browser downloads (wasm + JS + page; the catalog is inside the wasm), and the wasm
# engine's CPU time per request against the native binary's for the same requests. The browser
# timings (first answer, recompute) come from tests/wasm/site.test.mjs.
# Usage: bench/wasm_site.sh [SITE_DIR] [MEMFIT_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
site="${1:-build-site/site}"
binary="${2:-build/memfit}"
total=0
for f in "$site"/index.html "$site"/*.mjs "$site"/memfit_engine.wasm "$site"/vendor/chart.umd.js; do
  raw=$(stat -c %s "$f"); gz=$(gzip -9 -c "$f" | wc -c); br=""
  total=$((total + gz))
  printf '%-28s %10d bytes, gzip -9 %9d\n' "$(basename "$f")" "$raw" "$gz"
done
printf 'compressed site (gzip -9): %d bytes = %.2f MiB (target <= 3 MiB)\n' "$total" "$(echo "$total / 1048576" | bc -l)"

export HF_HUB_OFFLINE=1 HF_ENDPOINT=http://127.0.0.1:9
home=$(mktemp -d); trap 'rm -rf "$home"' EXIT
export HF_HOME="$home" MEMFIT_CACHE="$home/memfit"
# The same requests both ways: native, one process per request (CPU time from /proc via time), and
# wasm, one engine answering them in turn (process.cpuUsage, after start-up and a warm-up run).
# Each model once (the engine keeps a process's model cache, as the server does; a CLI run has none).
models=(meta-llama/Llama-3.1-8B Qwen/Qwen3-8B deepseek-ai/DeepSeek-V3 google/gemma-3-27b-it
        mistralai/Mistral-7B-v0.1 meta-llama/Llama-3.1-70B meta-llama/Llama-3.2-1B openai/gpt-oss-20b)
commands=("estimate-memory" "inference" "train" "fit")
flags=("" "--context 32768" "--method lora" "--gpu h100")
TIMEFORMAT='%U %S'
# Native: one process per request, CPU time (user + sys) including the process's start-up, which
# `memfit --version` shows alone.
native=()
for i in "${!models[@]}"; do
  t=$( { time "$binary" "${commands[$((i % 4))]}" "${models[$i]}" ${flags[$((i % 4))]} --format json >/dev/null 2>&1; } 2>&1 )
  native+=("$(echo "(${t% *} + ${t#* }) * 1000" | bc -l)")
done
t=$( { time "$binary" --version >/dev/null 2>&1; } 2>&1 )
printf 'native start-up (memfit --version): %.0f ms CPU\n' "$(echo "(${t% *} + ${t#* }) * 1000" | bc -l)"
NATIVE="${native[*]}" MODELS="${models[*]}" SITE="$site" node --input-type=module -e '
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
const site = resolve(process.env.SITE);
const { createEngine } = await import(site + "/engine.mjs");
const engine = await createEngine({ offline: true, wasmBinary: readFileSync(site + "/memfit_engine.wasm") });
const requests = [];
const kinds = [["estimate-memory", {}], ["inference", { context: 32768 }], ["train", { method: "lora" }], ["fit", { gpu: ["h100"] }]];
process.env.MODELS.split(" ").forEach((model, i) => requests.push([kinds[i % 4][0], { ...kinds[i % 4][1], model }]));
for (const [c, b] of requests) engine.run(c, { ...b, model: "openai-community/gpt2" });  // warm-up (not these models: no cached answers)
const native = process.env.NATIVE.split(" ").map(Number);
let wasmTotal = 0, nativeTotal = 0;
requests.forEach(([c, b], i) => {
  const before = process.cpuUsage();
  const r = engine.run(c, b);
  const used = process.cpuUsage(before);
  if (r.status !== 200) throw new Error(r.body);
  const ms = (used.user + used.system) / 1000;
  wasmTotal += ms; nativeTotal += native[i];
  console.log(`${c.padEnd(16)} ${b.model.padEnd(28)} native ${native[i].toFixed(0).padStart(4)} ms (with start-up)   wasm ${ms.toFixed(0).padStart(4)} ms`);
});
console.log(`total: native ${nativeTotal.toFixed(0)} ms CPU in ${requests.length} processes, wasm ${wasmTotal.toFixed(0)} ms CPU in one engine (ratio ${(wasmTotal / nativeTotal).toFixed(2)}; first answer for each model, no cache)`);
'
