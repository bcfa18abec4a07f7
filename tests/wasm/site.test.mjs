// The static site (scripts/build-site.sh -> build-site/site/) in Debian's Chromium: served by a
// plain static file server on loopback (python3 -m http.server), it answers in every mode with no
// request to any /api path, reads a Hub id from a local stand-in Hub that sends CORS headers (and
// says why it cannot when the stand-in sends none), answers for a dropped .gguf and .safetensors
// file, reproduces its state from a shared link, and axe-core finds no violation. Timings (first
// answer after navigation, a recompute) are printed for docs/benchmarks.md.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { readFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { createRequire } from "node:module";
const require = createRequire(resolve("tests/browser/package.json"));
const { chromium } = require("playwright-core");
import { tinyLlamaGguf } from "../browser/gguf.mjs";

const siteDir = resolve(process.env.MEMFIT_ENGINE_DIR || "build-site/site");
const axeSource = readFileSync(join(dirname(require.resolve("axe-core")), "axe.min.js"), "utf8");
const MODEL = "meta-llama/Llama-3.1-8B";
const CLOSED_HUB = "http://127.0.0.1:9";
let files, browser, base, requests = [];
const hubs = [];

before(async () => {
  // Port 0: the system picks a free one, which http.server prints ("Serving HTTP on 127.0.0.1
  // port N"); a random port could be one another test's connection holds.
  files = spawn("python3", ["-u", "-m", "http.server", "--bind", "127.0.0.1", "-d", siteDir, "0"], { stdio: ["ignore", "pipe", "pipe"] });
  files.stderr.on("data", (d) => { for (const line of String(d).split("\n")) { const m = line.match(/"(GET|POST|HEAD) (\S+)/); if (m) requests.push(m[2]); } });
  const port = await new Promise((ok, fail) => {
    let said = "";
    const timer = setTimeout(() => fail(new Error(`http.server did not start: ${said.trim()}`)), 10000);
    files.stdout.on("data", (d) => {
      said += String(d);
      const m = /port (\d+)/.exec(said);
      if (m) { clearTimeout(timer); ok(Number(m[1])); }
    });
    files.on("exit", (code) => { clearTimeout(timer); fail(new Error(`http.server exited ${code}: ${said.trim()}`)); });
  });
  base = `http://127.0.0.1:${port}/`;
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
});

after(async () => {
  if (browser) await browser.close();
  if (files) files.kill();
  for (const h of hubs) h.close();
});

// A stand-in Hub: one repository, standin/tiny-llama, with a config.json (a small Llama), served
// as the Hub serves it (model info, tree, resolve with Range), with or without CORS headers.
const SHA = "0123456789abcdef0123456789abcdef01234567";
const CONFIG = JSON.stringify({ architectures: ["LlamaForCausalLM"], model_type: "llama", hidden_size: 512, intermediate_size: 1536,
  num_hidden_layers: 4, num_attention_heads: 8, num_key_value_heads: 4, vocab_size: 32000, max_position_embeddings: 4096, torch_dtype: "bfloat16" });
async function standInHub(cors) {
  const seen = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const headers = cors ? { "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "Range, Authorization, Content-Type",
      "Access-Control-Expose-Headers": "Content-Range, Content-Length, X-Repo-Commit, X-Linked-Size, X-Error-Code, X-Error-Message, Link" } : {};
    if (req.method === "OPTIONS") { res.writeHead(204, headers); return res.end(); }
    const url = new URL(req.url, "http://x");
    const json = (body) => { res.writeHead(200, { ...headers, "Content-Type": "application/json" }); res.end(JSON.stringify(body)); };
    if (url.pathname === "/api/models/standin/tiny-llama/revision/main") return json({ id: "standin/tiny-llama", sha: SHA });
    if (url.pathname === `/api/models/standin/tiny-llama/tree/${SHA}`) return json([{ type: "file", path: "config.json", size: CONFIG.length, oid: "1".repeat(40) }]);
    if (url.pathname.startsWith("/standin/tiny-llama/resolve/") && url.pathname.endsWith("/config.json")) {
      const range = /bytes=(\d+)-(\d+)/.exec(req.headers.range || "");
      const body = Buffer.from(CONFIG);
      if (range) {
        const first = Number(range[1]), last = Math.min(Number(range[2]), body.length - 1);
        res.writeHead(206, { ...headers, "Content-Range": `bytes ${first}-${last}/${body.length}`, "X-Repo-Commit": SHA });
        return res.end(body.subarray(first, last + 1));
      }
      res.writeHead(200, { ...headers, "X-Repo-Commit": SHA, "Content-Length": body.length });
      return res.end(body);
    }
    res.writeHead(404, { ...headers, "X-Error-Code": "EntryNotFound" });
    res.end("{}");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  hubs.push(server);
  return { endpoint: `http://127.0.0.1:${server.address().port}`, seen };
}

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  return page;
}

async function settle(page) {
  await page.waitForFunction(() => document.body.dataset.busy === "0" && !document.querySelector("#status").textContent.startsWith("Estimating"), null, { timeout: 60000 });
}

async function open(page, hash, hub = CLOSED_HUB) {
  const started = Date.now();
  await page.goto(`${base}?hub=${encodeURIComponent(hub)}#${hash}`);
  await page.waitForSelector("#results:not([hidden]) #verdict", { timeout: 60000 });
  await settle(page);
  return Date.now() - started;
}

test("every mode answers for a catalog model with no request to any /api path; timings", async () => {
  requests = [];
  const page = await newPage();
  await open(page, `mode=load&model=${encodeURIComponent(MODEL)}`);
  const timings = await page.evaluate(() => window.memfitTimings);
  console.log(`timing: static site, first answer ${timings.firstRender.toFixed(0)} ms after navigation (load mode, ${MODEL})`);
  for (const mode of ["inference", "train", "fit", "compare", "load"]) {
    await page.click(`#tab-${mode}`);
    await page.waitForFunction((m) => window.memfitTimings.recomputes.some((r) => r.mode === m), mode, { timeout: 60000 });
    await settle(page);
    assert.ok(!(await page.$("#status.error")), `${mode}: ${await page.textContent("#status")}`);
  }
  await page.click("#tab-inference");
  await settle(page);
  await page.fill("#inference-context", "12345");
  await page.waitForFunction(() => document.querySelector("#verdict").textContent.includes("12,345 tokens"), null, { timeout: 60000 });
  await settle(page);
  const recomputes = await page.evaluate(() => window.memfitTimings.recomputes);
  console.log(`timing: static site recomputes: ${recomputes.map((r) => `${r.mode} ${r.ms.toFixed(0)} ms`).join(", ")}`);
  assert.deepEqual(requests.filter((r) => r.includes("/api")), [], "no request to an /api path");
  assert.deepEqual(page.errors, []);
  const shared = page.url();
  const other = await newPage();
  await other.goto(shared);
  await other.waitForSelector("#results:not([hidden]) #verdict", { timeout: 60000 });
  await settle(other);
  assert.equal(await other.inputValue("#model"), MODEL);
  assert.equal(await other.inputValue("#inference-context"), "12345");
  // No access token (a "token" parameter) in a shared link; "new-tokens" is a setting.
  assert.ok(!/[#&][^=&]*token=/i.test(shared), `no token in a shared link: ${shared}`);
  await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ["violations"] })).violations.map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`));
  assert.deepEqual(violations, [], "axe-core violations");
});

test("a Hub id is read from a stand-in Hub with CORS headers; without them one line says why", async () => {
  const hub = await standInHub(true);
  const page = await newPage();
  await open(page, "mode=load&model=standin%2Ftiny-llama", hub.endpoint);
  assert.ok(hub.seen.some((r) => r.includes("/resolve/") && r.endsWith("config.json")), hub.seen.join(", "));
  const table = await page.textContent("#results");
  assert.ok(table.length > 0);
  const closed = await standInHub(false);
  const other = await newPage();
  await other.goto(`${base}?hub=${encodeURIComponent(closed.endpoint)}#mode=load&model=standin%2Ftiny-llama`);
  await other.waitForSelector("#status.error", { timeout: 60000 });
  assert.match(await other.textContent("#status"), /cross-origin/);
});

test("dropped .gguf and .safetensors files answer, read in the tab", async () => {
  const dir = mkdtempSync(join(tmpdir(), "memfit-drop-"));
  const { header, size } = tinyLlamaGguf();
  const gguf = Buffer.alloc(size);
  header.copy(gguf);
  writeFileSync(join(dir, "tiny.gguf"), gguf);
  const st = Buffer.from(JSON.stringify({ "w.weight": { dtype: "F16", shape: [4, 4], data_offsets: [0, 32] } }));
  const len = Buffer.alloc(8); len.writeBigUInt64LE(BigInt(st.length));
  writeFileSync(join(dir, "model.safetensors"), Buffer.concat([len, st, Buffer.alloc(32)]));
  const page = await newPage();
  await open(page, `mode=load&model=${encodeURIComponent(MODEL)}`);
  for (const name of ["tiny.gguf", "model.safetensors"]) {
    await page.setInputFiles("#local-files", join(dir, name));
    await page.waitForFunction((n) => document.querySelector("#model").value.endsWith(n), name, { timeout: 30000 });
    await settle(page);
    assert.ok(!(await page.$("#status.error")), `${name}: ${await page.textContent("#status")}`);
  }
  // A hostile file: the CLI's one-line error, and the page still answers afterwards.
  const bad = Buffer.alloc(64); bad.writeUInt32LE(0x46554747, 0); bad.writeUInt32LE(3, 4); bad.writeBigUInt64LE(1n << 60n, 8);
  writeFileSync(join(dir, "hostile.gguf"), bad);
  await page.setInputFiles("#local-files", join(dir, "hostile.gguf"));
  await page.waitForSelector("#status.error", { timeout: 30000 });
  assert.ok(!(await page.textContent("#status")).includes("\n"));
});
