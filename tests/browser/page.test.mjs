// Browser tests: memfit serve on a loopback port, Debian's Chromium driven by playwright-core,
// going through each mode as a user would, and checking that the numbers on the page are the
// API's. Screenshots go to $MEMFIT_SCREENSHOTS (default a temporary directory) for people to look
// at; none are committed. Timings (first render from a cold server, recomputes) are printed.
//   MEMFIT_BINARY=build/memfit node --test tests/browser/
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { base, browser, MODEL, shots, startServer, api, formatBytes, newPage, settle, open, cells, axe, fakeHub, GGUF_REPO } from "./harness.mjs";

test("first render from a cold server, and the page weight", async () => {
  const page = await newPage();
  const assets = [];
  page.on("response", async (r) => { if (!r.url().includes("/api/")) assets.push((await r.body()).length); });
  await open(page, `mode=load&model=${encodeURIComponent(MODEL)}`);
  const timings = await page.evaluate(() => window.memfitTimings);
  const weight = assets.reduce((a, b) => a + b, 0);
  console.log(`timing: first render ${timings.firstRender.toFixed(0)} ms after navigation (cold server, load mode); page weight ${weight} bytes in ${assets.length} files (HTML, CSS, JS, Chart.js)`);
  const resources = await page.evaluate(() => performance.getEntriesByType("resource").map((r) => `${r.name.replace(/^.*\/\/[^/]+\//, "")} ${r.startTime.toFixed(0)}+${r.duration.toFixed(0)}`));
  console.log(`timing: requests (start+duration ms): ${resources.join(", ")}`);
  // Each mode once (the first answer of a mode is uncached on the server), then a changed setting.
  for (const mode of ["inference", "train", "fit", "compare", "load"]) {
    await page.click(`#tab-${mode}`);
    await page.waitForFunction((m) => window.memfitTimings.recomputes.some((r) => r.mode === m), mode);
    await settle(page);
  }
  await page.click("#tab-inference");
  await settle(page);
  await page.fill("#inference-context", "12345");
  await page.waitForFunction(() => document.querySelector("#verdict").textContent.includes("12,345 tokens"));
  await settle(page);
  const recomputes = await page.evaluate(() => window.memfitTimings.recomputes);
  console.log(`timing: recompute to the first numbers on the page, per mode: ${recomputes.map((r) => `${r.mode} ${r.ms.toFixed(0)} ms`).join(", ")}`);
  assert.deepEqual(page.offsite, [], "no network except the memfit server");
});

test("load mode: type a model, read the table, change a setting, see it recompute", async () => {
  const page = await newPage();
  await page.goto(base);
  await page.fill("#model", "meta-llama/Llama-3.2-1B");
  await page.press("#model", "Enter");
  await page.waitForSelector("#results:not([hidden]) #table td");
  await settle(page);
  await page.uncheck('input[name="dtypes"][value="bfloat16"]');  // no button: the change recomputes
  await page.waitForFunction(() => document.querySelectorAll("#table tbody tr").length === 4);
  const rows = await cells(page, "#table");
  assert.deepEqual(rows[0], ["dtype", "Load", "Largest block", "Training (AdamW)"]);
  const expected = await api("estimate-memory", { model: "meta-llama/Llama-3.2-1B", dtypes: ["float32", "float16", "int8", "int4"] });
  expected.rows.forEach((r, i) => assert.deepEqual(rows[i + 1].slice(0, 3), [r.dtype, formatBytes(r.total_bytes), formatBytes(r.largest_block_bytes)]));
  const drawn = await page.$eval("#chart-main", (c) => c.width > 0 && c.getContext("2d").getImageData(0, 0, c.width, c.height).data.some((v) => v !== 0));
  assert.ok(drawn, "the chart rendered");
  assert.match(page.url(), /model=meta-llama%2FLlama-3.2-1B/);
  assert.match(page.url(), /load.dtypes.bfloat16=0/);
  await page.screenshot({ path: join(shots, "load.png"), fullPage: true });
  await axe(page, "load mode");
  assert.deepEqual(page.offsite, [], "no network except the memfit server");
});

test("accelerate table and a shared URL restore the whole state", async () => {
  const page = await newPage();
  await open(page, "mode=load&model=meta-llama%2FLlama-3.2-1B");
  await page.check('input[name="accelerate"]');
  await page.waitForFunction(() => document.querySelector("#table th")?.textContent === "dtype" && document.querySelectorAll("#table th")[1].textContent === "Largest Layer");
  const shared = page.url();
  const other = await newPage();
  await other.goto(shared);
  await other.waitForSelector("#table th");
  await settle(other);
  const headers = await other.$$eval("#table th", (ths) => ths.map((t) => t.textContent));
  assert.deepEqual(headers, ["dtype", "Largest Layer", "Total Size", "Training using Adam"]);
  assert.equal(await other.inputValue("#model"), "meta-llama/Llama-3.2-1B");
  assert.ok(await other.isChecked('input[name="accelerate"]'));
});

test("exports JSON, CSV, Markdown and a PNG of the chart", async () => {
  const page = await newPage();
  await open(page, "mode=load&model=meta-llama%2FLlama-3.2-1B");
  for (const [kind, check] of [["json", (t) => JSON.parse(t).schema === "memfit.estimate-memory/1"],
    ["csv", (t) => t.startsWith("# memfit: meta-llama/Llama-3.2-1B\n") && t.includes("\ndtype,Load,Load (bytes),Largest block,")], ["markdown", (t) => t.includes("| dtype | Load |")],
    ["png", (t) => t.startsWith("\x89PNG")]]) {
    const [download] = await Promise.all([page.waitForEvent("download"), page.click(`[data-export="${kind}"]`)]);
    const text = readFileSync(await download.path(), kind === "png" ? "latin1" : "utf8");
    assert.ok(check(text), `${kind} export: ${text.slice(0, 80)}`);
  }
});

test("an unknown model shows the CLI's error", async () => {
  const page = await newPage();
  await page.goto(base);
  await page.fill("#model", "nobody/nothing-here");
  await page.press("#model", "Enter");
  await page.waitForSelector("#status.error");
  assert.match(await page.textContent("#status"), /model not found/);
});

test("inference: numbers are the API's, the context curve crosses the GPU where fit says", async () => {
  const page = await newPage();
  await open(page, `mode=inference&model=${encodeURIComponent(MODEL)}&inference.context=4096&inference.gpus=RTX+4090%2CH100+SXM`);
  const expected = await api("inference", { model: MODEL, context: 4096, batch: 1, dtype: "bfloat16", quant: "stored", "kv-dtype": "model", attn: "sdpa", engine: "transformers", tp: 1, gpu: "RTX 4090" });
  const rows = await cells(page, "#table table:first-of-type");
  const LABELS = { weights: "Weights", kv_cache: "KV cache", activations: "Activations", cuda_context: "CUDA context", allocator_reserve: "Allocator reserve", cuda_graphs: "CUDA graphs" };
  for (const c of expected.components) {
    if (c.bytes === 0) assert.ok(!rows.some((r) => r[0] === LABELS[c.name]), `no zero row ${c.name}`);
    else assert.ok(rows.some((r) => r[0] === LABELS[c.name] && r[1] === formatBytes(c.bytes)), `component ${c.name}`);
  }
  assert.ok(rows.some((r) => r[0] === "total per GPU" && r[1] === formatBytes(expected.total_bytes)));
  // The curve's points are the API's totals at those contexts.
  const chart = await page.evaluate(() => { const c = Chart.getChart("chart-main"); return c.data.datasets.map((d) => ({ label: d.label, data: d.data, bytes: d.bytes, crossing: d.crossing })); });
  const curve = chart[0];
  for (const [i, point] of curve.data.entries()) {
    if (i % 4) continue;  // a few of them: each is one API call
    const r = await api("inference", { model: MODEL, batch: 1, dtype: "bfloat16", quant: "stored", "kv-dtype": "model", attn: "sdpa", engine: "transformers", tp: 1, gpu: "RTX 4090", context: point.x });
    assert.equal(curve.bytes[i], r.total_bytes, `curve at ${point.x}`);
  }
  // One API call gives the whole curve: the chart is that call's points.
  const oneCall = await api("inference", { model: MODEL, context: 4096, batch: 1, dtype: "bfloat16", quant: "stored", "kv-dtype": "model", attn: "sdpa", engine: "transformers", tp: 1, gpu: "RTX 4090", curve: true, "curve-gpu": ["RTX 4090", "H100 SXM"] });
  assert.deepEqual(curve.bytes, oneCall.curve.points.map((p) => p.bytes));
  assert.deepEqual(curve.data.map((p) => p.x), oneCall.curve.points.map((p) => p.context));
  assert.equal(oneCall.curve.max_context, expected.model_max_context);
  // The crossing on the RTX 4090 equals fit's longest context.
  const fit = await api("fit", { model: MODEL, gpu: "RTX 4090", task: "inference", context: 4096, batch: 1 });
  const marker = chart.find((d) => d.crossing !== undefined && d.label.includes("RTX 4090"));
  assert.ok(marker, "a crossing marker for the RTX 4090");
  assert.equal(marker.crossing, fit.limits.max_context_tokens);
  assert.ok((await cells(page, "#curve-table")).some((r) => r[0] === "RTX 4090" && r[2] === fit.limits.max_context_tokens.toLocaleString("en-US")));
  await page.screenshot({ path: join(shots, "inference.png"), fullPage: true });
  await axe(page, "inference mode");
  // The slider recomputes and the URL follows.
  const t0 = Date.now();
  await page.$eval("#ctx-slider", (s) => { s.value = String(4 * 15); s.dispatchEvent(new Event("input", { bubbles: true })); });
  await page.waitForFunction(() => document.querySelector("#verdict").textContent.includes("32,768 tokens"));
  await settle(page);
  console.log(`timing: slider to updated page and curve ${Date.now() - t0} ms (including the 150 ms pause)`);
  assert.match(page.url(), /inference.context=32768/);
  assert.deepEqual(page.offsite, []);
});

test("inference with vLLM: the KV curve crosses the KV pool where fit --engine vllm says", async () => {
  const page = await newPage();
  await open(page, `mode=inference&model=${encodeURIComponent(MODEL)}&inference.engine=vllm&inference.context=8192&inference.gpus=RTX+4090`);
  const fit = await api("fit", { model: MODEL, gpu: "RTX 4090", engine: "vllm", context: 8192, batch: 1, "kv-dtype": "model", quant: "stored", tp: 1 });
  const marker = await page.evaluate(() => Chart.getChart("chart-main").data.datasets.filter((d) => d.crossing !== undefined).map((d) => ({ label: d.label, crossing: d.crossing }))[0]);
  assert.ok(marker, "a crossing marker");
  assert.equal(marker.crossing, fit.rows[0].max_context_tokens);
  await page.screenshot({ path: join(shots, "inference-vllm.png"), fullPage: true });
});

test("train: each stage's bar is the API's stage total, made of the parts alive then", async () => {
  const page = await newPage();
  await open(page, `mode=train&model=${encodeURIComponent(MODEL)}`);
  const check = async (body) => {
    const expected = await api("train", body);
    const bars = await page.evaluate(() => { const c = Chart.getChart("chart-main"); return { labels: c.data.labels, sums: c.data.labels.map((_, j) => c.data.datasets.reduce((s, d) => s + d.bytes[j], 0)),
      parts: c.data.labels.map((_, j) => Object.fromEntries(c.data.datasets.filter((d) => d.bytes[j] > 0).map((d) => [d.label, d.bytes[j]]))) }; });
    assert.deepEqual(bars.sums, expected.stages.map((s) => s.bytes), "bars = stage totals");
    // Each bar is made of the parts the API says are alive at that stage, with their bytes.
    assert.deepEqual(bars.parts, expected.stages.map((s) => Object.fromEntries(s.parts.map((p) => [p.name, p.bytes]))), "bar parts = the API's stage parts");
    assert.ok(bars.labels.includes(`${expected.peak_stage} (peak)`), "peak marked");
    assert.match(await page.textContent("#verdict"), new RegExp(formatBytes(expected.total_bytes).replace(".", "\\.")));
  };
  await check({ model: MODEL, method: "full", "lora-rank": 8, optimizer: "adamw", precision: "bf16-mixed", batch: 1, context: 2048, "grad-accum": 1, checkpointing: "none", gpus: 1, strategy: "ddp", gpu: "RTX 4090" });
  await page.screenshot({ path: join(shots, "train.png"), fullPage: true });
  await axe(page, "train mode");
  await page.selectOption('fieldset[data-for="train"] select[name="method"]', "lora");
  await page.waitForFunction(() => document.querySelector("#verdict").textContent.includes("lora"));
  await settle(page);
  await check({ model: MODEL, method: "lora", "lora-rank": 8, optimizer: "adamw", precision: "bf16-mixed", batch: 1, context: 2048, "grad-accum": 1, checkpointing: "none", gpus: 1, strategy: "ddp", gpu: "RTX 4090" });
  await page.fill('fieldset[data-for="train"] input[name="grad-accum"]', "4");
  await page.waitForFunction(() => location.hash.includes("train.grad-accum=4"));
  await settle(page);
  await check({ model: MODEL, method: "lora", "lora-rank": 8, optimizer: "adamw", precision: "bf16-mixed", batch: 1, context: 2048, "grad-accum": 4, checkpointing: "none", gpus: 1, strategy: "ddp", gpu: "RTX 4090" });
  const recomputes = await page.evaluate(() => window.memfitTimings.recomputes);
  console.log(`timing: recomputes ${JSON.stringify(recomputes.map((r) => `${r.mode} ${r.ms.toFixed(0)} ms`))}`);
});

test("fit: verdict, limits, device map and advice are the API's; apply switches the page", async () => {
  const page = await newPage();
  await open(page, `mode=fit&model=${encodeURIComponent(MODEL)}&fit.gpu=RTX+4090&fit.task=inference&fit.context=8192`);
  const expected = await api("fit", { model: MODEL, gpu: "RTX 4090", task: "inference", context: 8192, batch: 1 });
  const said = (await page.textContent("#verdict")).toLowerCase();
  assert.ok(said.startsWith(`${expected.verdict} on `) && said.includes("rtx 4090"), said);
  assert.equal(await page.getAttribute("#verdict", "class"), "fits");
  const facts = await cells(page, "#fit-facts");
  assert.ok(facts.some((r) => r[0] === "longest context" && r[1] === expected.limits.max_context_tokens.toLocaleString("en-US")));
  assert.ok(facts.some((r) => r[0] === "decode, upper bound" && r[1] === `${expected.speed_upper_bounds.decode_tokens_per_s.toFixed(1)} tokens/s`));
  const map = await cells(page, "#device-map");
  assert.equal(map.length - 1, Object.keys(expected.device_map).length);
  const advice = await cells(page, "#advice");
  assert.equal(advice.length - 1, expected.advice.length);
  expected.advice.forEach((a, i) => assert.ok(advice[i + 1][0].startsWith(a.action) && advice[i + 1][1] === formatBytes(a.total_bytes), a.action));
  await page.screenshot({ path: join(shots, "fit.png"), fullPage: true });
  await axe(page, "fit mode");
  // "KV cache in fp8" -> inference mode with the fp8 KV cache.
  const index = expected.advice.findIndex((a) => a.action.startsWith("KV cache in fp8"));
  assert.ok(index >= 0);
  await page.click(`button.apply[data-advice="${index}"]`);
  await page.waitForSelector('#tab-inference[aria-selected="true"]');
  await settle(page);
  assert.equal(await page.inputValue('fieldset[data-for="inference"] select[name="kv-dtype"]'), "fp8");
  const inference = await api("inference", { model: MODEL, context: 8192, batch: 1, dtype: "bfloat16", quant: "stored", "kv-dtype": "fp8", attn: "sdpa", engine: "transformers", tp: 1, gpu: "RTX 4090" });
  assert.ok((await page.textContent("#verdict")).includes(`${formatBytes(inference.total_bytes)} per GPU`));
});

test("fit: a serving deployment (vLLM on two GPUs) is the API's row; the smaller-sibling advice changes the model", async () => {
  const page = await newPage();
  await open(page, `mode=fit&model=${encodeURIComponent(MODEL)}&fit.gpu=RTX+4090&fit.count=2&fit.task=inference&fit.context=8192&fit.engine=vllm`);
  const expected = await api("fit", { model: MODEL, gpu: "2xRTX 4090", context: 8192, batch: 1, engine: "vllm" });
  const row = expected.rows[0];
  const rows = await cells(page, "#table");
  assert.deepEqual(rows[1].slice(0, 6), [`${row.gpus} × ${row.gpu}`, row.layout, row.verdict, formatBytes(row.total_per_gpu_bytes),
    formatBytes(row.kv_pool_bytes), row.max_context_tokens.toLocaleString("en-US")]);
  await page.screenshot({ path: join(shots, "fit-vllm.png"), fullPage: true });
  // Back to the device map on one GPU, where the advice names a smaller sibling.
  await page.selectOption('fieldset[data-for="fit"] select[name="engine"]', "");
  await page.selectOption('fieldset[data-for="fit"] select[name="count"]', "1");
  await page.waitForSelector("#advice");
  await settle(page);
  const fit = await api("fit", { model: MODEL, gpu: "RTX 4090", task: "inference", context: 8192, batch: 1 });
  const index = fit.advice.findIndex((a) => a.action.startsWith("use the smaller sibling"));
  assert.ok(index >= 0);
  const sibling = /sibling (\S+)/.exec(fit.advice[index].action)[1];
  await page.click(`button.apply[data-advice="${index}"]`);
  await page.waitForFunction((m) => document.querySelector("#model").value === m && location.hash.includes(encodeURIComponent(m)), sibling);
  await settle(page);
  const smaller = await api("fit", { model: sibling, gpu: "RTX 4090", task: "inference", context: 8192, batch: 1 });
  assert.ok((await page.textContent("#verdict")).includes(formatBytes(smaller.total_bytes)));
});

test("fit: the runs-on grid of every catalog GPU, filtered, fitting first by the least GPU memory", async () => {
  const page = await newPage();
  await open(page, `mode=fit&model=${encodeURIComponent(MODEL)}&fit.gpu=RTX+4090&fit.context=8192`);
  await page.click("#grid summary");
  await page.waitForSelector("#grid-table table");
  const grid = await api("fit", { model: MODEL, "all-gpus": true, engine: "vllm", context: 8192, batch: 1 });
  const gpus = new Set(grid.rows.map((r) => r.gpu));
  let rows = await cells(page, "#grid-table");
  assert.equal(rows.length - 1, gpus.size, "one row per catalog GPU");
  const first = grid.rows.filter((r) => r.fits).sort((a, b) => a.gpus * a.gpu_memory_bytes - b.gpus * b.gpu_memory_bytes)[0];
  assert.equal(rows[1][0], first.gpu, "the fitting GPU with the least memory first");
  const cell = rows[1][3 + [1, 2, 4, 8].indexOf(first.gpus)];
  assert.equal(cell, `fits · ${first.max_context_tokens.toLocaleString("en-US")} ctx`);
  await page.selectOption("#grid-vendor", "amd");
  rows = await cells(page, "#grid-table");
  assert.ok(rows.length > 1 && rows.slice(1).every((r) => r[1] === "amd"), "filtered by vendor");
  await page.screenshot({ path: join(shots, "fit-grid.png"), fullPage: true });
});

test("compare: two models side by side, and one model's quantizations, are the API's numbers", async () => {
  const page = await newPage();
  const a = "meta-llama/Llama-3.2-1B", b = "Qwen/Qwen2.5-0.5B";
  await open(page, `mode=compare&model=${encodeURIComponent(a)}&compare.model2=${encodeURIComponent(b)}&compare.context=8192&compare.batch=1&compare.gpu=RTX+4090`);
  let rows = await cells(page, "#table");
  assert.deepEqual(rows[0], ["quantity", a, b]);
  for (const [i, model] of [a, b].entries()) {
    const inference = await api("inference", { model, context: 8192, batch: 1, gpu: "RTX 4090" });
    const train = await api("train", { model, gpu: "RTX 4090" });
    assert.equal(rows.find((r) => r[0].startsWith("inference per GPU"))[i + 1], formatBytes(inference.total_bytes), `${model} inference`);
    assert.equal(rows.find((r) => r[0].startsWith("full training peak"))[i + 1], formatBytes(train.total_bytes), `${model} train`);
  }
  await page.screenshot({ path: join(shots, "compare.png"), fullPage: true });
  await axe(page, "compare mode");
  await page.fill('input[name="model2"]', "");
  await page.dispatchEvent('input[name="model2"]', "change");
  await page.waitForFunction(() => document.querySelector("#table caption")?.textContent.startsWith("Quantizations"));
  await settle(page);
  rows = await cells(page, "#table");
  const nf4 = await api("inference", { model: a, context: 8192, batch: 1, quant: "nf4-dq", gpu: "RTX 4090" });
  assert.deepEqual(rows.find((r) => r[0] === "nf4-dq"), ["nf4-dq", formatBytes(nf4.per_gpu.weights), formatBytes(nf4.total_bytes)]);
  await page.screenshot({ path: join(shots, "compare-quantizations.png"), fullPage: true });
});

for (const mode of ["load", "inference", "train", "fit", "compare"]) {
  test(`${mode} mode on a phone, in the dark theme`, async () => {
    const page = await newPage({ width: 390, height: 844 }, "dark");
    await open(page, `mode=${mode}&model=${encodeURIComponent(MODEL)}`);
    const error = await page.$("#status.error");
    if (error) assert.fail(`${mode}: ${await page.textContent("#status")}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
    assert.equal(overflow, false, "no horizontal scrolling on a phone");
    await page.screenshot({ path: join(shots, `${mode}-phone-dark.png`), fullPage: true });
    await axe(page, `${mode} on a phone, dark`);
  });
}


test("post to the Hub: the exact text shown is the text posted, and only once", async () => {
  const { hub, asked } = await fakeHub();
  const record = join(mkdtempSync(join(tmpdir(), "memfit-post-")), "posted.txt");
  const other = await startServer({ ...process.env, HF_ENDPOINT: `http://127.0.0.1:${hub.address().port}`, HF_HUB_OFFLINE: "", MEMFIT_POST_RECORD: record });
  try {
    const page = await newPage();
    await page.goto(`${other.base}#mode=load&model=meta-llama%2FLlama-3.2-1B`);
    await page.waitForSelector("#results:not([hidden]) #table td", { timeout: 20000 }).catch(async () => assert.fail(await page.textContent("#status")));
    await settle(page);
    await page.click("#post");
    const shown = await page.textContent("#post-body");
    assert.match(shown, /^## Memory requirements for `meta-llama\/Llama-3.2-1B`/);
    await page.fill("#post-token", "hf_postTOKEN");
    await page.click("#post-confirm");
    await page.waitForFunction(() => document.querySelector("#post-status").textContent !== "");
    assert.match(await page.textContent("#post-status"), /^Posted: .*discussions\/1$/);
    const posted = asked.filter((a) => a.method === "POST");
    assert.equal(posted.length, 1);
    assert.equal(JSON.parse(posted[0].body).description, shown, "the text posted is the text shown");
    assert.equal(posted[0].authorization, "Bearer hf_postTOKEN");
    await page.click("#post-confirm");
    await page.waitForFunction(() => /already/.test(document.querySelector("#post-status").textContent));
    assert.equal(asked.filter((a) => a.method === "POST").length, 1, "never twice");
  } finally {
    other.child.kill();
    hub.close();
  }
});

test("model box: the Hub's search through the server, the token never in the page", async () => {
  // A fake Hub answering /api/models?search=..., and a second memfit server that uses it.
  const { hub, asked } = await fakeHub();
  const token = "hf_browserTestSECRET123";
  const other = await startServer({ ...process.env, HF_ENDPOINT: `http://127.0.0.1:${hub.address().port}`, HF_TOKEN: token, HF_HUB_OFFLINE: "" });
  try {
    const page = await newPage();
    const seen = [];
    page.on("response", async (r) => { if (r.url().includes("/api/")) seen.push(await r.text()); });
    await page.goto(other.base);
    await page.fill("#model", "found-mod");
    await page.waitForFunction(() => [...document.querySelectorAll("#model-list option")].some((o) => o.value === "someorg/Found-Model-7B"));
    const label = await page.$eval('#model-list option[value="someorg/Found-Model-7B"]', (o) => o.textContent);
    assert.equal(label, "Hub · 1,234 downloads · text-generation");
    assert.ok(asked.some((a) => a.url.startsWith("/api/models?search=found-mod&")), JSON.stringify(asked));
    assert.ok(asked.every((a) => a.authorization === `Bearer ${token}`), "the server's token goes to the Hub");
    assert.ok(seen.every((body) => !body.includes(token)), "and never to the page");
  } finally {
    other.child.kill();
    hub.close();
  }
});

test("inference with llama.cpp: a GGUF repository's devices and context curve are the API's", async () => {
  const { hub } = await fakeHub();
  const other = await startServer({ ...process.env, HF_ENDPOINT: `http://127.0.0.1:${hub.address().port}`, HF_HUB_OFFLINE: "" });
  const call = async (body) => {
    const response = await fetch(`${other.base}api/v1/inference`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const json = await response.json();
    assert.equal(response.status, 200, JSON.stringify(json));
    return json;
  };
  try {
    const page = await newPage();
    await page.goto(`${other.base}#mode=inference&model=${encodeURIComponent(GGUF_REPO)}&inference.engine=llama.cpp&inference.context=2048&inference.gpus=RTX+4090`);
    await page.waitForSelector("#results:not([hidden]) #table td", { timeout: 20000 }).catch(async () => assert.fail(await page.textContent("#status")));
    await settle(page);
    assert.equal(await page.$eval("#engine-llamacpp", (o) => o.disabled), false, "llama.cpp is offered for a GGUF repository");
    // The page's own request: the GGUF as stored on the first chart GPU (dtype, quantization,
    // attention and tensor parallel are not llama.cpp's choices and are disabled).
    const body = { model: GGUF_REPO, context: 2048, batch: 1, engine: "llama.cpp", gpu: "RTX 4090" };
    for (const name of ["dtype", "quant", "kv-dtype", "attn", "tp"]) assert.ok(await page.$eval(`fieldset[data-for="inference"] [name="${name}"]`, (e) => e.disabled), name);
    const expected = await call(body);
    assert.ok(expected.devices, "the llama.cpp estimate");
    const rows = await cells(page, "#table table:first-of-type");
    for (const d of expected.devices) assert.ok(rows.some((r) => r[0] === d.name && r.at(-1) === formatBytes(d.total_bytes)), `device ${d.name}`);
    assert.ok(expected.devices.some((d) => d.name === "CUDA0" && d.layers === 2), "every layer on the RTX 4090");
    assert.ok((await page.textContent("#verdict")).includes(`${formatBytes(expected.devices.find((d) => d.name === "CUDA0").total_bytes)} on the largest GPU`));
    // The chart is the API's one-call curve: the largest GPU with every layer offloaded.
    const curve = await call({ ...body, curve: true, "curve-gpu": ["RTX 4090"] });
    assert.equal(curve.curve.metric, "largest_gpu");
    const chart = await page.evaluate(() => Chart.getChart("chart-main").data.datasets[0].bytes);
    assert.deepEqual(chart, curve.curve.points.map((p) => p.bytes));
    assert.equal(curve.curve.max_context, 4096);
    assert.ok((await cells(page, "#curve-table")).some((r) => r[0] === "RTX 4090" && r[2] === "all 4,096 (the model's maximum)"));
    await page.screenshot({ path: join(shots, "inference-llamacpp.png"), fullPage: true });
    await axe(page, "llama.cpp inference");
    assert.deepEqual(page.offsite.filter((u) => !u.startsWith(other.base)), [], "nothing but this server");
  } finally {
    other.child.kill();
    hub.close();
  }
});

test("keyboard: arrow keys move between the modes", async () => {
  const page = await newPage();
  await open(page, "mode=load&model=meta-llama%2FLlama-3.2-1B");
  await page.focus("#tab-load");
  await page.keyboard.press("ArrowRight");
  await page.waitForSelector('#tab-inference[aria-selected="true"]');
  assert.equal(await page.evaluate(() => document.activeElement.id), "tab-inference");
  assert.ok(await page.isVisible("#panel-inference"));
});
