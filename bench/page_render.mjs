// The web page's speed, as a user meets it: first render from a cold server (a fresh `memfit
// serve` per run, a browser that is already running), each mode's recompute for a catalog model,
// and the page weight. Whole-process figures; run on a quiet machine:
//   node bench/page_render.mjs [build/memfit] [runs]
// Each run opens a fresh browser context (no cache, no storage) and first shows about:blank in it
// for 1.5 s: a new context makes Chromium load its own omnibox WebUI (about 100 chrome://
// resources, traced in docs/benchmarks.md), which a running browser has loaded long before the
// user types the address, and which would otherwise share the two CPUs with the measured page.
// FRESH_CONTEXT=1 skips that wait (the figure as first measured, browser start-up work included).
// Needs Debian's chromium and tests/browser's node_modules (scripts/test.sh installs both).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const { chromium } = createRequire(join(here, "../tests/browser/package.json"))("playwright-core");
const binary = process.argv[2] || "build/memfit";
const runs = Number(process.argv[3] || 7);
const MODEL = "meta-llama/Llama-3.1-8B";

async function startServer() {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(binary, ["serve", "--port", String(port)], {
    stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, HF_ENDPOINT: "http://127.0.0.1:9", HF_HUB_OFFLINE: "1" } });
  await new Promise((resolve, reject) => {
    child.stderr.on("data", (d) => { if (String(d).includes("serving on")) resolve(); });
    child.on("exit", (code) => reject(new Error(`server exited ${code}`)));
  });
  return { child, base: `http://127.0.0.1:${port}/` };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
// A running browser: one page drawn before the measured ones (nothing of memfit's).
const warm = await browser.newPage();
await warm.setContent("<p>warm</p>");
const first = [], recompute = {};
let weight = 0, files = 0;
for (let i = 0; i < runs; i++) {
  const server = await startServer();
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  if (!process.env.FRESH_CONTEXT) { await page.goto("about:blank"); await new Promise((r) => setTimeout(r, 1500)); }
  const sizes = [];
  page.on("response", async (r) => { if (!r.url().includes("/api/")) sizes.push((await r.body()).length); });
  await page.goto(`${server.base}#mode=load&model=${encodeURIComponent(MODEL)}`);
  await page.waitForFunction(() => window.memfitTimings && window.memfitTimings.firstRender !== null);
  first.push(await page.evaluate(() => window.memfitTimings.firstRender));
  // Each mode twice: the first answer of a mode is a server cache miss, the second a changed setting.
  for (const mode of ["inference", "train", "fit", "compare", "load"]) {
    await page.click(`#tab-${mode}`);
    await page.waitForFunction((m) => window.memfitTimings.recomputes.some((r) => r.mode === m), mode);
  }
  await page.waitForFunction(() => document.body.dataset.busy === "0");
  for (const r of await page.evaluate(() => window.memfitTimings.recomputes)) (recompute[r.mode] ||= []).push(r.ms);
  weight = sizes.reduce((a, b) => a + b, 0);
  files = sizes.length;
  await context.close();
  server.child.kill();
}
await browser.close();
console.log(`runs: ${first.map((x) => x.toFixed(0)).join(" ")}`);
console.log(`first render from a cold server (${runs} runs${process.env.FRESH_CONTEXT ? ", fresh context" : ""}): median ${median(first).toFixed(0)} ms, min ${Math.min(...first).toFixed(0)}, max ${Math.max(...first).toFixed(0)}`);
console.log(`recompute to the first numbers (median per mode): ${Object.entries(recompute).map(([m, xs]) => `${m} ${median(xs).toFixed(0)} ms`).join(", ")}`);
console.log(`page weight: ${weight} bytes in ${files} files`);
