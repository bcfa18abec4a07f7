// The browser tests' harness: memfit serve on a loopback port, Debian's Chromium driven by
// playwright-core, a fake Hub (model search, discussions, GGUF repositories), and the helpers
// every test file uses. Importing it registers the before/after hooks that start and stop the
// server and the browser; `base` and `browser` are live bindings to them.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdtempSync, mkdirSync, existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";
import { tinyLlamaGguf } from "./gguf.mjs";
import { startMemfitServer } from "./serve.mjs";

export const binary = process.env.MEMFIT_BINARY || "build/memfit";
export const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
export const shots = process.env.MEMFIT_SCREENSHOTS || mkdtempSync(join(tmpdir(), "memfit-shots-"));
mkdirSync(shots, { recursive: true });
const axeSource = readFileSync(join(dirname(createRequire(import.meta.url).resolve("axe-core")), "axe.min.js"), "utf8");
export const MODEL = "meta-llama/Llama-3.1-8B";
let server;
export let browser, base;

// memfit serve on a loopback port the system picks: {child, base}.
export async function startServer(env = process.env) {
  return startMemfitServer(binary, env, 10000);
}

before(async () => {
  assert.ok(existsSync(binary), `${binary} not built`);
  const started = await startServer();
  server = started.child;
  base = started.base;
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill();
  console.log(`screenshots in ${shots}`);
});

// The API itself, for comparing with what the page shows.
export async function api(command, body) {
  const response = await fetch(`${base}api/v1/${command}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  assert.equal(response.status, 200, `${command} ${JSON.stringify(body)}`);
  return response.json();
}
// The page's byte format (web/util.js), to compare a cell with an API number.
export function formatBytes(bytes) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let value = Number(bytes), unit = 0;
  if (Math.abs(value) < 1024) return `${value} B`;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
  return `${value.toFixed(2)} ${units[unit]}`;
}

export async function newPage(viewport = { width: 1100, height: 900 }, colorScheme = "light") {
  const context = await browser.newContext({ viewport, acceptDownloads: true, colorScheme });
  const page = await context.newPage();
  const offsite = [];
  page.on("request", (r) => { if (!r.url().startsWith(base) && !r.url().startsWith("blob:") && !r.url().startsWith("data:")) offsite.push(r.url()); });
  page.on("pageerror", (e) => offsite.push(`page error: ${e.message}`));
  page.offsite = offsite;
  return page;
}

// Waits until the page has no request in flight (body[data-busy="0"]) after `action`.
export async function settle(page) {
  await page.waitForFunction(() => document.body.dataset.busy === "0" && !document.querySelector("#status").textContent.startsWith("Estimating"));
}

export async function open(page, hash) {
  await page.goto(`${base}#${hash}`);
  await page.waitForSelector("#results:not([hidden]) #verdict");
  await settle(page);
}

export const cells = (page, selector) => page.$$eval(`${selector} tr`, (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent.trim())));

export async function axe(page, label) {
  await page.addScriptTag({ content: axeSource });
  const result = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ["violations"] })).violations
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`));
  assert.deepEqual(result, [], `${label}: axe-core violations`);
}

// A fake Hub: the model search (/api/models?search=), a repository's discussions (listed empty,
// created as number 1), GGUF repositories with the Hub's URL scheme (model info, recursive tree,
// /resolve/ with Range: 206 and Content-Range, the tensor data as zeros), 404 for anything else.
// Records each request.
export const GGUF_REPO = "someorg/Tiny-Llama-GGUF", GGUF_FILE = "tiny-llama-F16.gguf";
// A repository of several GGUF models (and a projector, which is never offered).
export const MULTI_REPO = "someorg/Tiny-Quants-GGUF";
export const MULTI_FILES = ["tiny-llama-2L-F16.gguf", "tiny-llama-4L-F16.gguf", "mmproj-tiny-F16.gguf"];
const GGUF_SHA = "1".repeat(40);
const REPOS = {
  [GGUF_REPO]: { [GGUF_FILE]: tinyLlamaGguf() },
  [MULTI_REPO]: { [MULTI_FILES[0]]: tinyLlamaGguf(), [MULTI_FILES[1]]: tinyLlamaGguf({ layers: 4 }), [MULTI_FILES[2]]: tinyLlamaGguf({ layers: 1 }) },
};
function serveGguf(req, res) {
  for (const [repo, files] of Object.entries(REPOS)) {
    const info = `/api/models/${repo}/`;
    if (req.url.startsWith(`${info}revision/`)) {
      res.end(JSON.stringify({ id: repo, sha: GGUF_SHA, private: false, gated: false, siblings: Object.keys(files).map((f) => ({ rfilename: f })) }));
      return true;
    }
    if (req.url.startsWith(`${info}tree/`)) {
      res.end(JSON.stringify(Object.entries(files).map(([path, g]) => ({ type: "file", path, size: g.size, oid: "2".repeat(40), lfs: { oid: "3".repeat(64), size: g.size, pointerSize: 134 } }))));
      return true;
    }
    if (!req.url.startsWith(`/${repo}/resolve/`)) continue;
    const name = Object.keys(files).find((f) => req.url.endsWith(`/${f}`));
    if (!name) return false;
    const gguf = files[name];
    res.setHeader("Content-Type", "application/octet-stream");
    res.setHeader("X-Repo-Commit", GGUF_SHA);
    res.setHeader("ETag", `"${"3".repeat(64)}"`);
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range || "");
    const start = m ? Number(m[1]) : 0, end = Math.min(m ? Number(m[2]) : gguf.size - 1, gguf.size - 1);
    const body = Buffer.alloc(end - start + 1);
    if (start < gguf.header.length) gguf.header.copy(body, 0, start, Math.min(gguf.header.length, end + 1));
    if (m) { res.statusCode = 206; res.setHeader("Content-Range", `bytes ${start}-${end}/${gguf.size}`); }
    res.end(body);
    return true;
  }
  return false;
}

export async function fakeHub() {
  const asked = [];
  const hub = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => { body += d; });
    req.on("end", () => {
      asked.push({ method: req.method, url: req.url, authorization: req.headers.authorization || "", body });
      res.setHeader("Content-Type", "application/json");
      if (req.url.startsWith("/api/models?search=")) {
        res.end(JSON.stringify([{ id: "someorg/Found-Model-7B", downloads: 1234, likes: 5, pipeline_tag: "text-generation", private: false }]));
      } else if (serveGguf(req, res)) {
        // answered: the GGUF repository
      } else if (req.url.endsWith("/discussions")) {
        res.end(JSON.stringify(req.method === "POST" ? { num: 1 } : { discussions: [] }));
      } else {
        res.statusCode = 404;
        res.setHeader("X-Error-Code", "RepoNotFound");
        res.end(JSON.stringify({ error: "Repository not found" }));
      }
    });
  });
  await new Promise((resolve) => hub.listen(0, "127.0.0.1", resolve));
  return { hub, asked };
}

// A second memfit server whose Hub is a fresh fake one: {other, hub, asked, call(command, body),
// close()}; call() asks this server's API and expects a 200.
export async function hubServer(env = {}) {
  const { hub, asked } = await fakeHub();
  const other = await startServer({ ...process.env, HF_ENDPOINT: `http://127.0.0.1:${hub.address().port}`, HF_HUB_OFFLINE: "", ...env });
  const call = async (command, body) => {
    const response = await fetch(`${other.base}api/v1/${command}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const json = await response.json();
    assert.equal(response.status, 200, `${command} ${JSON.stringify(body)}: ${JSON.stringify(json)}`);
    return json;
  };
  return { other, hub, asked, call, close: () => { other.child.kill(); hub.close(); } };
}
