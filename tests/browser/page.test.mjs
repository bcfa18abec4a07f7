// Browser tests: memfit serve on a loopback port, Debian's Chromium driven by playwright-core,
// going through each mode as a user would. Screenshots go to $MEMFIT_SCREENSHOTS (default a
// temporary directory) for people to look at; none are committed.
//   MEMFIT_BINARY=build/memfit node --test tests/browser/
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const binary = process.env.MEMFIT_BINARY || "build/memfit";
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
const shots = process.env.MEMFIT_SCREENSHOTS || mkdtempSync(join(tmpdir(), "memfit-shots-"));
let server, browser, base;

before(async () => {
  assert.ok(existsSync(binary), `${binary} not built`);
  const port = 20000 + Math.floor(Math.random() * 20000);
  server = spawn(binary, ["serve", "--port", String(port)], { stdio: ["ignore", "ignore", "pipe"] });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("server did not start")), 10000);
    server.stderr.on("data", (d) => { if (String(d).includes("serving on")) { clearTimeout(timer); resolve(); } });
    server.on("exit", (code) => reject(new Error(`server exited ${code}`)));
  });
  base = `http://127.0.0.1:${port}/`;
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

async function newPage(viewport = { width: 1100, height: 900 }) {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  const offsite = [];
  page.on("request", (r) => { if (!r.url().startsWith(base) && !r.url().startsWith("blob:") && !r.url().startsWith("data:")) offsite.push(r.url()); });
  page.offsite = offsite;
  return page;
}

test("load mode: type a model, read the table, see the chart", async () => {
  const page = await newPage();
  await page.goto(base);
  await page.fill("#model", "meta-llama/Llama-3.2-1B");
  await page.uncheck('input[name="dtypes"][value="bfloat16"]');
  await page.click("#run");
  await page.waitForSelector("#results:not([hidden]) table");
  const rows = await page.$$eval("#table tr", (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
  assert.deepEqual(rows[0], ["dtype", "Load", "Largest block", "Training (AdamW)"]);
  assert.equal(rows.length, 5, "four dtypes and a header");
  assert.equal(rows[2][0], "float16");
  assert.equal(rows[2][1], "2.30 GiB");
  const drawn = await page.$eval("#chart-main", (c) => c.width > 0 && c.getContext("2d").getImageData(0, 0, c.width, c.height).data.some((v) => v !== 0));
  assert.ok(drawn, "the chart rendered");
  assert.match(page.url(), /model=meta-llama%2FLlama-3.2-1B/);
  await page.screenshot({ path: join(shots, "load.png"), fullPage: true });
  assert.deepEqual(page.offsite, [], "no network except the memfit server");
});

test("accelerate table and a shared URL restore the whole state", async () => {
  const page = await newPage();
  await page.goto(base);
  await page.fill("#model", "meta-llama/Llama-3.2-1B");
  await page.check('input[name="accelerate"]');
  await page.click("#run");
  await page.waitForSelector("#table th");
  const shared = page.url();
  const other = await newPage();
  await other.goto(shared);
  await other.waitForSelector("#table th");
  const headers = await other.$$eval("#table th", (ths) => ths.map((t) => t.textContent));
  assert.deepEqual(headers, ["dtype", "Largest Layer", "Total Size", "Training using Adam"]);
  assert.equal(await other.inputValue("#model"), "meta-llama/Llama-3.2-1B");
  assert.ok(await other.isChecked('input[name="accelerate"]'));
});

test("exports JSON, CSV and Markdown", async () => {
  const page = await newPage();
  await page.goto(`${base}#mode=load&model=meta-llama%2FLlama-3.2-1B`);
  await page.waitForSelector("#table th");
  for (const [kind, check] of [["json", (t) => JSON.parse(t).schema === "memfit.estimate-memory/1"],
    ["csv", (t) => t.startsWith("dtype,Load,")], ["markdown", (t) => t.includes("| dtype | Load |")]]) {
    const [download] = await Promise.all([page.waitForEvent("download"), page.click(`[data-export="${kind}"]`)]);
    const text = readFileSync(await download.path(), "utf8");
    assert.ok(check(text), `${kind} export: ${text.slice(0, 80)}`);
  }
});

test("an unknown model shows the CLI's error", async () => {
  const page = await newPage();
  await page.goto(base);
  await page.fill("#model", "nobody/nothing-here");
  await page.click("#run");
  await page.waitForSelector("#status.error");
  assert.match(await page.textContent("#status"), /model not found/);
});

for (const mode of ["inference", "train", "fit"]) {
  test(`${mode} mode renders a result or a clear error`, async () => {
    const page = await newPage({ width: 390, height: 844 });  // a phone-sized screen
    await page.goto(base);
    await page.fill("#model", "meta-llama/Llama-3.2-1B");
    await page.click(`.modes button[data-mode="${mode}"]`);
    assert.ok(await page.isVisible(`fieldset[data-for="${mode}"]`));
    await page.click("#run");
    await page.waitForFunction(() => !document.querySelector("#results").hidden || document.querySelector("#status.error"));
    const error = await page.$("#status.error");
    if (!error) await page.waitForSelector("#table td");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
    assert.equal(overflow, false, "no horizontal scrolling on a phone");
    await page.screenshot({ path: join(shots, `${mode}.png`), fullPage: true });
    if (error) assert.fail(`${mode}: ${await page.textContent("#status")}`);
  });
}
