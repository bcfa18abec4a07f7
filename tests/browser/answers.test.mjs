// Browser tests of issue 29's page items: the first answers a new user gets are right and read
// well. The headline says the verdict in every mode (Train has a GPU control); GGUF models work
// in every mode and a repository of several GGUF files offers them; an error clears the old
// answer and names the page's controls, not CLI flags; every tab sends the same defaults and the
// same hardware; tables use human labels without zero rows; charts use a log axis where values
// span decades, Load's chart is about loading, vLLM draws no GPU that cannot fit; the advice
// comes before a folded device map; on a phone the answer is on the first screen and the advice
// is not clipped; exports carry their settings and human units.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { base, MODEL, shots, api, formatBytes, newPage, settle, open, cells, axe, hubServer, GGUF_REPO, MULTI_REPO, MULTI_FILES } from "./harness.mjs";

const SMALL = "meta-llama/Llama-3.2-1B";

// The API requests the page makes, batches opened: [{command, body}].
function recordRequests(page) {
  const asked = [];
  page.on("request", (r) => {
    const m = /\/api\/v1\/([\w-]+)$/.exec(r.url());
    if (!m || r.method() !== "POST") return;
    const body = JSON.parse(r.postData() || "{}");
    if (m[1] === "batch") asked.push(...body.requests);
    else asked.push({ command: m[1], body });
  });
  return asked;
}

const headlineOf = async (page) => ({ text: await page.textContent("#verdict"), cls: await page.getAttribute("#verdict", "class") });
const pageErrors = (page) => page.offsite.filter((e) => e.startsWith("page error"));
const CLASS = { fits: "fits", "fits with offload": "offload", "does not fit": "nofit" };
// The verdict status an answer gives: fit's string, or the verdict object's own words.
function statusOf(v) {
  if (typeof v === "string") return v;
  for (const key of ["status", "verdict", "result", "kind"]) if (v && typeof v[key] === "string") return v[key];
  return v && v.fits === true ? "fits" : "does not fit";
}

test("headline: every mode says the verdict in words for the chosen GPU, the API's verdict", async () => {
  const page = await newPage();
  const asked = recordRequests(page);
  // Load: fit's verdict for loading (task load) on the hardware's GPU.
  await open(page, `mode=load&model=${encodeURIComponent(MODEL)}&hardware.gpu=RTX+4090`);
  const load = await api("fit", { model: MODEL, gpu: "RTX 4090", task: "load", "no-advice": true });
  let h = await headlineOf(page);
  assert.ok(h.text.toLowerCase().startsWith(`${load.verdict} on `) && /RTX 4090.* to load/.test(h.text), h.text);
  assert.equal(h.cls, CLASS[load.verdict]);
  // Fit (inference on one RTX 4090).
  await page.click("#tab-fit");
  await page.selectOption('fieldset[data-for="fit"] select[name="task"]', "inference");
  await page.waitForFunction(() => /inference/.test(location.hash) && document.body.dataset.busy === "0");
  await settle(page);
  const fit = await api("fit", { model: MODEL, gpu: "RTX 4090", task: "inference", batch: 1 });
  h = await headlineOf(page);
  assert.ok(h.text.toLowerCase().startsWith(`${fit.verdict} on `) && h.text.includes("RTX 4090"), h.text);
  // Compare: each model's verdict on the GPU.
  await open(page, `mode=compare&model=${encodeURIComponent(MODEL)}&compare.model2=${encodeURIComponent("meta-llama/Llama-3.1-70B")}&hardware.gpu=RTX+4090`);
  h = await headlineOf(page);
  assert.match(h.text, /^Serving on one RTX 4090: meta-llama\/Llama-3\.1-8B fits.* · meta-llama\/Llama-3\.1-70B does not fit/);
  // No GPU: no verdict, and no GPU sent.
  await open(page, `mode=train&model=${encodeURIComponent(MODEL)}&hardware.gpu=RTX+4090`);
  await page.selectOption("#hw-gpu", "");
  await page.waitForFunction(() => location.hash.includes("hardware.gpu=&"));
  await settle(page);
  assert.equal(asked.filter((a) => a.command === "train").at(-1).body.gpu, undefined);
  h = await headlineOf(page);
  assert.match(h.text, /^peak /);
  assert.equal(h.cls, "");
  assert.deepEqual(pageErrors(page), []);
});

// Inference and Train carry a `verdict` when given a GPU (issue 29, docs/json.md); until the API
// in this tree does, this test says so and skips.
test("headline: Inference and Train say the verdict their answer carries", async (t) => {
  const probe = await api("inference", { model: MODEL, gpu: "RTX 4090" });
  if (probe.verdict === undefined) { t.skip("the API's inference answer carries no verdict in this tree"); return; }
  const page = await newPage();
  const asked = recordRequests(page);
  for (const mode of ["inference", "train"]) {
    await open(page, `mode=${mode}&model=${encodeURIComponent(MODEL)}&hardware.gpu=RTX+4090`);
    const sent = asked.filter((a) => a.command === mode && !a.body.curve).at(-1);
    assert.equal(sent.body.gpu, "RTX 4090", `${mode} sends the hardware's GPU`);
    const answer = await api(mode, sent.body);
    assert.ok(answer.verdict !== undefined, `${mode}'s answer carries a verdict`);
    const h = await headlineOf(page);
    assert.ok(h.text.toLowerCase().startsWith(statusOf(answer.verdict)), `${mode}: ${h.text}`);
    assert.equal(h.cls, CLASS[statusOf(answer.verdict)]);
    await page.screenshot({ path: join(shots, `${mode}-verdict.png`), fullPage: true });
  }
  assert.deepEqual(pageErrors(page), []);
});

test("train has a GPU control: the GPU chosen there is the one its request names", async () => {
  const page = await newPage();
  const asked = recordRequests(page);
  await open(page, `mode=train&model=${encodeURIComponent(SMALL)}`);
  assert.ok(await page.isVisible("#hw-gpu"), "a GPU control in Train");
  await page.selectOption("#hw-gpu", "H100 SXM");
  await page.waitForFunction(() => location.hash.includes("hardware.gpu=H100+SXM"));
  await settle(page);
  assert.equal(asked.filter((a) => a.command === "train").at(-1).body.gpu, "H100 SXM");
});

test("inference: New tokens sends --new-tokens for transformers only, and the answer's prefill is the prompt's", async () => {
  const page = await newPage();
  const asked = recordRequests(page);
  await open(page, `mode=inference&model=${encodeURIComponent(SMALL)}&inference.context=1024`);
  const sent = () => asked.filter((a) => a.command === "inference").at(-1).body;
  assert.equal(sent()["new-tokens"], undefined, "nothing sent while the field is empty");
  await page.fill('fieldset[data-for="inference"] input[name="new-tokens"]', "512");
  await page.press('fieldset[data-for="inference"] input[name="new-tokens"]', "Tab");
  await page.waitForFunction(() => location.hash.includes("new-tokens=512"));
  await settle(page);
  assert.equal(sent()["new-tokens"], 512);
  const answer = await api("inference", sent());
  assert.equal(answer.settings.new_tokens, 512);
  await page.selectOption('fieldset[data-for="inference"] select[name="engine"]', "vllm");
  await settle(page);
  assert.equal(sent().engine, "vllm");
  assert.equal(sent()["new-tokens"], undefined, "vLLM sizes its pool for the whole context");
  assert.ok(await page.isHidden("#status.error"));
});

test("GGUF models: every mode answers, Fit offers llama.cpp and gives its --fit verdict and command", async () => {
  const s = await hubServer();
  try {
    const page = await newPage();
    for (const mode of ["load", "inference", "train", "fit", "compare"]) {
      await page.goto(`${s.other.base}#mode=${mode}&model=${encodeURIComponent(GGUF_REPO)}&hardware.gpu=RTX+4090` + (mode === "compare" ? `&compare.model2=${encodeURIComponent(SMALL)}` : ""));
      await page.waitForFunction(() => document.querySelector("#status").textContent && !document.querySelector("#status").textContent.startsWith("Estimating") || !document.querySelector("#results").hidden, null, { timeout: 20000 });
      await settle(page);
      assert.deepEqual(pageErrors(page), [], `${mode}: no script error`);
      if (mode === "train") continue;  // a GGUF file may have no training estimate: an error is an answer too
      const error = await page.$("#status.error");
      assert.equal(error, null, `${mode}: ${error && await page.textContent("#status")}`);
      assert.equal(await page.isHidden("#results"), false, mode);
      await page.screenshot({ path: join(shots, `gguf-${mode}.png`), fullPage: true });
    }
    // Fit (the page is on compare now): llama.cpp offered; its fit answer shown as the API gives it.
    await page.click("#tab-fit");
    await settle(page);
    assert.equal(await page.$eval("#fit-llamacpp", (o) => o.disabled), false, "Fit's engines include llama.cpp");
    const fit = await s.call("fit", { model: GGUF_REPO, gpu: "RTX 4090", task: "load" });
    assert.equal(typeof fit.fits, "boolean");
    const h = await headlineOf(page);
    assert.ok(h.text.startsWith(fit.fits ? "Fits on " : "Does not fit on ") && h.text.includes("RTX 4090"), h.text);
    assert.equal(await page.textContent("#llamacpp-command"), fit.command);
    await page.selectOption('fieldset[data-for="fit"] select[name="engine"]', "llama.cpp");
    await page.waitForFunction(() => location.hash.includes("fit.engine=llama.cpp"));
    await settle(page);
    assert.equal(await page.$("#status.error"), null, await page.textContent("#status"));
    // Compare: the GGUF column beside a safetensors model, with llama.cpp's numbers.
    await page.goto(`${s.other.base}#mode=compare&model=${encodeURIComponent(GGUF_REPO)}&compare.model2=${encodeURIComponent(SMALL)}&compare.context=2048&hardware.gpu=RTX+4090`);
    await page.waitForSelector("#results:not([hidden]) #table td", { timeout: 20000 });
    await settle(page);
    const inference = await s.call("inference", { model: GGUF_REPO, context: 2048, batch: 1, gpu: "RTX 4090" });
    const cuda0 = inference.devices.find((d) => d.name === "CUDA0");
    const rows = await cells(page, "#table");
    assert.equal(rows.find((r) => r[0].startsWith("inference per GPU"))[1], formatBytes(cuda0.total_bytes));
    await axe(page, "compare with a GGUF model");
    assert.deepEqual(pageErrors(page), []);
  } finally { s.close(); }
});

test("a repository of several GGUF files offers them; the one chosen is sent as gguf-file", async () => {
  const s = await hubServer();
  try {
    const page = await newPage();
    const asked = recordRequests(page);
    await page.goto(`${s.other.base}#mode=inference&model=${encodeURIComponent(MULTI_REPO)}&inference.context=2048&hardware.gpu=RTX+4090`);
    await page.waitForSelector("#status.error", { timeout: 20000 });
    await settle(page);
    const message = await page.textContent("#status");
    assert.doesNotMatch(message, /(^|[\s(:])--[a-z]/, `no CLI flag in ${message}`);
    assert.match(message, /choose one in “GGUF file” above/);
    assert.ok(await page.isVisible("#gguf-file"), "the GGUF files are offered");
    const offered = await page.$$eval("#gguf-file option", (os) => os.map((o) => o.value).filter(Boolean));
    assert.deepEqual(offered.sort(), MULTI_FILES.filter((f) => !f.startsWith("mmproj")).sort());
    await axe(page, "GGUF file choice");
    await page.screenshot({ path: join(shots, "gguf-choose.png"), fullPage: true });
    await page.selectOption("#gguf-file", MULTI_FILES[1]);
    await page.waitForSelector("#results:not([hidden]) #table td", { timeout: 20000 });
    await settle(page);
    const sent = asked.filter((a) => a.command === "inference").at(-1).body;
    assert.equal(sent["gguf-file"], MULTI_FILES[1]);
    const expected = await s.call("inference", sent);
    assert.equal(expected.total_layers, 5, "the 4-layer file (llama.cpp counts the output layer)");
    assert.ok((await cells(page, "#table table:first-of-type")).some((r) => r[0] === "CUDA0" && r.at(-1) === formatBytes(expected.devices.find((d) => d.name === "CUDA0").total_bytes)));
    assert.match(page.url(), /model\.gguf-file=tiny-llama-4L-F16\.gguf/);
    // A link restores the choice; another model forgets it.
    const other = await newPage();
    await other.goto(page.url());
    await other.waitForSelector("#results:not([hidden]) #table td", { timeout: 20000 });
    assert.equal(await other.inputValue("#gguf-file"), MULTI_FILES[1]);
    await page.fill("#model", SMALL);
    await page.press("#model", "Enter");
    await page.waitForFunction(() => document.querySelector("#gguf-row").hidden);
  } finally { s.close(); }
});

test("errors: the old answer is cleared, and the message names the page's controls, not CLI flags", async () => {
  const page = await newPage();
  await open(page, `mode=fit&model=${encodeURIComponent(MODEL)}&hardware.gpu=RTX+4090`);
  assert.equal(await page.isHidden("#results"), false);
  await page.fill("#hw-ram", "lots");
  await page.waitForSelector("#status.error");
  await settle(page);
  const message = await page.textContent("#status");
  assert.doesNotMatch(message, /(^|[\s(:])--[a-z]/, message);
  assert.match(message, /“CPU RAM for offload”/);
  assert.equal(await page.isHidden("#results"), true, "the previous answer is not left standing");
  await page.screenshot({ path: join(shots, "error.png"), fullPage: true });
  await axe(page, "an error");
  await page.fill("#hw-ram", "64GiB");
  await page.waitForSelector("#results:not([hidden])");
  await settle(page);
  await page.fill("#model", "nobody/nothing-here");
  await page.press("#model", "Enter");
  await page.waitForSelector("#status.error");
  assert.equal(await page.isHidden("#results"), true);
  assert.doesNotMatch(await page.textContent("#status"), /(^|[\s(:])--[a-z]/);
});

test("defaults: the CLI's, one per quantity, and every tab sends the same hardware", async () => {
  const page = await newPage();
  const asked = recordRequests(page);
  await open(page, `mode=inference&model=${encodeURIComponent(MODEL)}&hardware.ram=64GiB`);
  const sent = (command) => asked.filter((a) => a.command === command && !a.body.curve).at(-1).body;
  // Serving: no context sent, so the API's default (8,192 for this 131,072-token model), as the CLI.
  assert.equal(sent("inference").context, undefined);
  assert.match(await page.textContent("#verdict"), /8,192 tokens × 1/);
  assert.equal(await page.getAttribute("#inference-context", "placeholder"), "default: the model's maximum, at most 8,192");
  // Training: 2,048.
  await page.click("#tab-train");
  await settle(page);
  assert.equal(sent("train").context, undefined);
  assert.equal((await api("train", sent("train"))).settings.seq, 2048);
  // Fit: the CLI's task (load) and the same CPU RAM as Compare.
  await page.click("#tab-fit");
  await settle(page);
  const cliFit = await api("fit", { model: MODEL, gpu: "RTX 4090" });
  assert.equal(await page.inputValue('fieldset[data-for="fit"] select[name="task"]'), cliFit.task);
  assert.equal(sent("fit").ram, "64GiB");
  await page.click("#tab-compare");
  await settle(page);
  assert.equal(sent("fit").ram, "64GiB", "Compare's fit sends Fit's CPU RAM");
  assert.equal(sent("fit").gpu, "RTX 4090");
  // The option table, when the server has one: the page's defaults are its defaults.
  const options = await fetch(`${base}api/v1/options`, { method: "POST", body: "{}" });
  if (options.status === 200) {
    const table = await options.json();
    const task = (table.commands.fit || []).find((o) => o.name === "task");
    if (task) assert.equal(await page.inputValue('fieldset[data-for="fit"] select[name="task"]'), task.default);
  }
  // Load's training figure differs from Train's: one line says why.
  await page.click("#tab-load");
  await settle(page);
  assert.match(await page.textContent("#view-note"), /Train tab adds activations/);
});

test("readable: human labels, no zero rows, Load's chart about loading, a log axis where values span decades", async () => {
  const page = await newPage();
  await open(page, `mode=inference&model=${encodeURIComponent(MODEL)}`);
  const firstColumn = async () => (await cells(page, "#table table")).slice(1).map((r) => r[0]);
  assert.ok((await firstColumn()).every((c) => !c.includes("_")), `labels: ${await firstColumn()}`);
  assert.ok((await cells(page, "#table table:first-of-type")).every((r) => r[1] !== "0 B"), "no zero rows");
  await page.click("#tab-train");
  await settle(page);
  const train = await cells(page, "#table table:nth-of-type(2)");
  assert.ok(train.slice(1).every((r) => !r[0].includes("_") && r[1] !== "0 B"), JSON.stringify(train));
  await page.click("#tab-load");
  await settle(page);
  const datasets = await page.evaluate(() => Chart.getChart("chart-main").data.datasets.map((d) => d.label));
  assert.deepEqual(datasets, ["Load (GiB)"], "Load's chart is about loading");
  await open(page, `mode=compare&model=${encodeURIComponent("deepseek-ai/DeepSeek-V3")}&compare.model2=${encodeURIComponent(SMALL)}`);
  assert.equal(await page.evaluate(() => Chart.getChart("chart-main").options.scales.y.type), "logarithmic");
  await page.screenshot({ path: join(shots, "compare-log.png"), fullPage: true });
  await open(page, `mode=compare&model=${encodeURIComponent(SMALL)}&compare.model2=${encodeURIComponent("Qwen/Qwen2.5-0.5B")}`);
  assert.notEqual(await page.evaluate(() => Chart.getChart("chart-main").options.scales.y.type), "logarithmic", "linear when the values are close");
});

test("vLLM's curve draws no line at 0 B for a GPU the weights do not fit; the table says why", async () => {
  const page = await newPage();
  await open(page, `mode=inference&model=${encodeURIComponent(MODEL)}&inference.engine=vllm&inference.gpus=RTX+4090%2CRTX+4060`);
  const lines = await page.evaluate(() => Chart.getChart("chart-main").data.datasets.filter((d) => d.borderDash).map((d) => ({ label: d.label, y: d.data.map((p) => p.y) })));
  assert.ok(lines.length >= 1, "the RTX 4090's pool is drawn");
  assert.ok(lines.every((l) => l.y.every((y) => y > 0)), JSON.stringify(lines));
  assert.ok(!lines.some((l) => l.label.startsWith("RTX 4060")), "the RTX 4060 cannot hold the weights: no line");
  const rows = await cells(page, "#curve-table");
  assert.ok(rows.some((r) => r[0].startsWith("RTX 4060") && r[1] === "none" && r[2]), JSON.stringify(rows));
});

test("fit: the advice comes before the device map, and a long map is folded", async () => {
  const page = await newPage();
  await open(page, `mode=fit&model=${encodeURIComponent("meta-llama/Llama-3.1-70B")}&fit.task=inference&hardware.gpu=RTX+4090&hardware.ram=256GiB`);
  const order = await page.evaluate(() => document.querySelector("#advice").compareDocumentPosition(document.querySelector("#device-map")) & Node.DOCUMENT_POSITION_FOLLOWING);
  assert.ok(order, "the advice first");
  assert.equal(await page.evaluate(() => document.querySelector("#device-map").tagName), "DETAILS");
  assert.equal(await page.evaluate(() => document.querySelector("#device-map").open), false, "folded");
  assert.match(await page.textContent("#device-map summary"), /\d+ modules/);
});

test("phone: the answer is on the first screen in every mode, and the advice is not clipped", async () => {
  const page = await newPage({ width: 390, height: 844 });
  for (const mode of ["load", "inference", "train", "fit", "compare"]) {
    await open(page, `mode=${mode}&model=${encodeURIComponent(MODEL)}&fit.task=inference`);
    const top = await page.$eval("#verdict", (v) => v.getBoundingClientRect().bottom);
    assert.ok(top <= 844, `${mode}: the headline ends at ${top} px, below the first screen`);
  }
  await open(page, `mode=fit&model=${encodeURIComponent("meta-llama/Llama-3.1-70B")}&fit.task=inference&hardware.gpu=RTX+4090`);
  const clipped = await page.$$eval("#advice td", (tds) => tds.filter((td) => td.getBoundingClientRect().right > window.innerWidth + 1 || td.scrollWidth > td.clientWidth + 1).length);
  assert.equal(clipped, 0, "advice cells within the screen");
  const scroll = await page.$eval("#advice table", (t) => t.scrollWidth - t.clientWidth);
  assert.ok(scroll <= 1, `the advice table scrolls sideways by ${scroll} px`);
  await page.screenshot({ path: join(shots, "fit-advice-phone.png"), fullPage: true });
  await axe(page, "fit advice on a phone");
});

test("exports carry their settings and human units", async () => {
  const page = await newPage();
  await open(page, `mode=inference&model=${encodeURIComponent(SMALL)}&inference.context=4096&hardware.gpu=RTX+4090`);
  const text = async (kind) => {
    const [download] = await Promise.all([page.waitForEvent("download"), page.click(`[data-export="${kind}"]`)]);
    return readFileSync(await download.path(), "utf8");
  };
  const csv = await text("csv");
  assert.match(csv, /^# memfit: meta-llama\/Llama-3\.2-1B\n# mode: Inference; .*Context tokens: 4096.*GPU: RTX 4090/m, csv);
  assert.match(csv, /\ncomponent,per GPU,per GPU \(bytes\)\n(.*\n)*Weights,\d+\.\d\d GiB,\d+\n/, csv);
  const md = await text("markdown");
  assert.match(md, /^mode: Inference; .*GPU: RTX 4090$/m, md);
  assert.match(md, /\| Weights \| \d+\.\d\d GiB \|/, md);
});
