// memfit's web page: the form is the state (state.js, kept in the URL hash); any change recomputes
// after a short pause; each mode renders the API's JSON (docs/json.md) with its own module.
import { $, $$, formatBytes, formatTokens, escapeHtml, verdictClass } from "./util.js";
import { api, apiGet } from "./api.js";
import { currentMode, setMode, saveToUrl, restoreFromUrl, modeValues, setControl, localValue, sharedValues, hashSets } from "./state.js";
import { drawChart, contextChart, stageChart } from "./charts.js";
import { loadTable, loadChart, LOAD_NOTE } from "./load.js";
import { inferenceCurve, inferenceTables, llamaCppTables, llamaCppTable, curveTable, sliderToContext, contextToSlider } from "./inference.js";
import { stageParts, trainTables, trainTable } from "./train.js";
import { fitTables, deployTable, adviceSetting, gridRows, gridHtml, isLlamaCppFit, llamaCppFitHtml } from "./fit.js";
import { DEFAULTS, applyDefaults, optionDefaults, showContextDefaults } from "./defaults.js";
import { verdictOf } from "./verdict.js";
import { label, pageError, ggufChoices, controlLabel } from "./words.js";
import { setCatalog, rememberModel, recentModels, isCatalogModel, searchHub } from "./models.js";
import { wireExports } from "./exports.js";
import { compare } from "./compare.js";

const state = { result: null, table: null, gpus: [], gpusReady: null, seq: 0, pending: 0, grid: null };
// Timings for bench/ and the browser test's output: ms from navigation to the first result, and
// from each change to its result on the page.
const timings = (window.memfitTimings = { firstRender: null, recomputes: [] });
let firstRendered;
const firstRender = new Promise((resolve) => { firstRendered = resolve; });

function busy(delta) {
  state.pending += delta;
  document.body.dataset.busy = state.pending > 0 ? "1" : "0";
}

// The API request of a mode: {command, body, hardware (the GPUs its verdict is about), verdict
// (Load: the fit request whose verdict its headline gives)}. Every mode sends the shared settings
// (the hardware row, the GGUF file) under the same keys, with the same values.
function requestFor(mode) {
  const model = $("#model").value.trim();
  const shared = sharedValues();
  const base = shared["gguf-file"] ? { model, "gguf-file": shared["gguf-file"] } : { model };
  const gpu = shared.gpu || "";
  const ram = shared.ram ? { ram: shared.ram } : {};
  if (mode === "load") {
    const body = { ...base, dtypes: $$('fieldset[data-for="load"] input[name="dtypes"]:checked').map((c) => c.value) };
    if ($('input[name="accelerate"]').checked) {
      body.accelerate = true;  // accelerate knows float32, float16, int8 and int4 only
      body.dtypes = body.dtypes.filter((d) => d !== "bfloat16");
    }
    const verdict = gpu ? { ...base, gpu, ...ram, task: "load", "no-advice": true } : null;
    return { command: "estimate-memory", body, hardware: gpu, verdict };
  }
  const body = { ...base, ...modeValues(mode) };
  if (gpu && mode !== "fit") body.gpu = gpu;
  // The prompt / new-tokens split is generate()'s: vLLM, SGLang and llama.cpp size for the
  // whole context (the API refuses it for them).
  if (mode === "inference" && body.engine !== "transformers") delete body["new-tokens"];
  if (mode === "inference" && body.engine === "llama.cpp") {
    // llama.cpp runs the GGUF file as stored: no dtype, quantization, attention or tensor-parallel
    // choice; its device is the hardware's GPU, else the first GPU chosen for the chart.
    for (const name of ["quant", "dtype", "attn", "tp", "kv-dtype"]) delete body[name];
    const first = localValue("inference", "gpus").split(",").filter(Boolean)[0];
    if (!body.gpu && first) body.gpu = first;
  }
  if (mode === "compare") Object.assign(body, ram);
  if (mode === "fit") {
    const count = Number(body.count || 1);
    delete body.count;
    if (gpu) body.gpu = count > 1 ? `${count}x${gpu}` : gpu;
    Object.assign(body, ram);
    if (body.engine) { delete body.ram; delete body.dtype; delete body.task; }
    else if (body.task === "load") { delete body.context; delete body.batch; }
    return { command: mode, body, hardware: gpu ? `${count} × ${gpu}` : "" };
  }
  return { command: mode, body, hardware: gpu };
}

// The settings an answer was asked with, in the page's words, for the exports: [[label, value]].
function settingsOf(mode, body, result) {
  const settings = [["mode", $(`#tab-${mode}`).textContent]];
  for (const [key, value] of Object.entries(body)) {
    if (key === "model" || value === "" || value === false) continue;
    settings.push([controlLabel(mode, key) || key, Array.isArray(value) ? value.join(", ") : String(value)]);
  }
  const context = result && result.settings && (result.settings.context ?? result.settings.seq);
  if (body.context === undefined && context) settings.push([`${controlLabel(mode, "context") || "context"} (default)`, formatTokens(context)]);
  return settings;
}

function setVerdict(text, cls = "") {
  const v = $("#verdict");
  v.textContent = text;
  v.className = cls;
}

// The headline: the verdict in words first (when the answer has one), then the answer's facts.
function headline(verdict, facts) {
  setVerdict([verdict && verdict.text, ...facts].filter(Boolean).join(" · "), verdict ? verdictClass(verdict.status) : "");
}

// The answer's assumptions and notes, their CLI flags in the page's words (as errors are).
function renderNotes(result, mode) {
  const items = [...(result.assumptions || []).map((a) => `assumption: ${pageError(a, mode)}`), ...(result.notes || []).map((n) => `note: ${pageError(n, mode)}`)];
  $("#assumptions").innerHTML = items.map((i) => `<li>${escapeHtml(i)}</li>`).join("");
}

// Load's headline: the model's size, and fit's verdict for loading it once that answer is in.
function loadHeadline(result, fit, hardware) {
  const v = verdictOf(fit, hardware);
  const facts = result.parameters !== undefined ? `${result.model}: ${(result.parameters / 1e9).toFixed(2)}B parameters, ${formatBytes(result.stored_bytes)} stored` : result.model;
  headline(v && { ...v, text: `${v.text} to load (${fit.dtype || "as stored"})` }, [facts]);
}

function renderLoad(result, hardware) {
  const t = loadTable(result);
  state.table = t;
  loadHeadline(result, null, hardware);
  $("#table").innerHTML = `<table><thead><tr>${t.headers.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join("")}</tr></thead><tbody>${t.rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>` +
    `<p class="hint" id="view-note">${escapeHtml(result.schema.startsWith("memfit.accelerate") ? LOAD_NOTE.accelerate : LOAD_NOTE.load)}</p>`;
  $("#extra").innerHTML = "";
  return drawChart(loadChart(result), `Memory to load ${result.model}, by dtype`);
}

function selectedGpus() {
  const names = localValue("inference", "gpus").split(",").filter(Boolean);
  return state.gpus.filter((g) => names.includes(g.name));
}

async function renderInference(result, body, seq, hardware) {
  if (result.devices) {  // llama.cpp: per device
    state.table = llamaCppTable(result);
    const gpus = result.devices.filter((d) => !d.host);
    const largest = Math.max(0, ...gpus.map((d) => d.total_bytes));
    headline(verdictOf(result, body.gpu), [`${gpus.length ? `${formatBytes(largest)} on the largest GPU` : "CPU only"}`, `${formatTokens(result.n_ctx)} tokens × ${result.n_seq}`, "llama.cpp"]);
    $("#table").innerHTML = llamaCppTables(result);
  } else {
    const shown = result.components.filter((c) => c.bytes !== 0);
    state.table = { headers: ["component", "per GPU"], rows: [...shown.map((c) => [label(c.name), formatBytes(c.bytes)]), ["total per GPU", formatBytes(result.total_bytes)]],
      raw: [...shown.map((c) => [label(c.name), c.bytes]), ["total per GPU", result.total_bytes]] };
    headline(verdictOf(result, hardware && `${result.gpus} × ${hardware}`), [`${formatBytes(result.total_bytes)} per GPU`, `${result.gpus} GPU(s)`, `${formatTokens(result.settings.context)} tokens × ${result.settings.batch}`]);
    $("#table").innerHTML = inferenceTables(result);
  }
  $("#extra").innerHTML = '<div id="curve-table"></div>';
  const maxContext = result.model_max_context || 131072;
  $("#ctx-slider").max = String(contextToSlider(maxContext));
  syncSlider(result.settings ? result.settings.context : result.n_ctx);
  await state.gpusReady;  // the chart's GPU choices (the first answer may come before the list)
  if (seq !== state.seq) return;
  let curve;
  try { curve = await inferenceCurve(body, selectedGpus()); } catch (e) {
    if (seq === state.seq) { $("#curve-table").textContent = `No context curve: ${pageError(e.message, "inference")}`; drawChart(null); }
    return;
  }
  if (seq !== state.seq) return;
  state.curve = curve;
  await drawChart(contextChart(curve), `${curve.title} for ${result.model}, up to the model's ${formatTokens(curve.maxContext)} tokens`);
  $("#curve-table").innerHTML = curveTable(curve);
}

function renderTrain(result, hardware) {
  state.table = trainTable(result);
  headline(verdictOf(result, hardware && `${result.settings.gpus} × ${hardware}`), [`peak ${formatBytes(result.total_bytes)} per GPU at the ${result.peak_stage} (${result.settings.method}, ${result.settings.optimizer}, ${result.settings.precision})`]);
  $("#table").innerHTML = trainTables(result);
  $("#extra").innerHTML = "";
  return drawChart(stageChart(result.stages, stageParts(result), result.peak_stage, result.total_bytes), `Training stages of ${result.model}: the parts alive at each stage`);
}

function renderFit(result, hardware) {
  if (isLlamaCppFit(result)) {  // a GGUF model: llama.cpp's --fit (no schema: docs/estimates.md)
    const e = result.estimate;
    headline(verdictOf(result, hardware), [`${e.offloaded_layers} of ${e.total_layers} layers on the GPU`, `${formatTokens(e.n_ctx)} tokens`, "llama.cpp"]);
    $("#table").innerHTML = llamaCppFitHtml(result);
    state.table = llamaCppTable(e);
  } else if (result.schema.startsWith("memfit.deploy")) {
    const r = result.rows[0] || {};
    const v = r.verdict ? verdictOf({ verdict: r.verdict }, `${r.gpus} × ${r.gpu}`) : { status: "does not fit", text: "No deployment" };
    headline(v, [r.layout, r.total_per_gpu_bytes !== undefined && `${formatBytes(r.total_per_gpu_bytes)} per GPU`]);
    $("#table").innerHTML = deployTable(result);
    state.table = { headers: ["GPU", "layout", "verdict", "per GPU", "longest context"], rows: result.rows.map((x) => [`${x.gpus} × ${x.gpu}`, x.layout, x.verdict, formatBytes(x.total_per_gpu_bytes), formatTokens(x.max_context_tokens)]),
      raw: result.rows.map((x) => [`${x.gpus} × ${x.gpu}`, x.layout, x.verdict, x.total_per_gpu_bytes, x.max_context_tokens]) };
  } else {
    headline(verdictOf(result, hardware), [`${formatBytes(result.total_bytes)} to ${result.task === "load" ? "load" : result.task === "train" ? "train" : "serve"}`]);
    $("#table").innerHTML = fitTables(result);
    state.table = { headers: ["advice", "total", "saves", "verdict"], rows: (result.advice || []).map((a) => [a.action, formatBytes(a.total_bytes), formatBytes(a.saved_bytes), a.verdict]),
      raw: (result.advice || []).map((a) => [a.action, a.total_bytes, a.saved_bytes, a.verdict]) };
  }
  drawChart(null);
  $("#extra").innerHTML = `<details id="grid"${state.gridOpen ? " open" : ""}><summary>Runs on: every catalog GPU at 1, 2, 4 and 8</summary>
    <div class="grid-filters"><label>Vendor <select id="grid-vendor"><option value="">all</option>${[...new Set(state.gpus.map((g) => g.vendor))].map((v) => `<option>${escapeHtml(v)}</option>`).join("")}</select></label>
    <label>At least <input type="number" id="grid-min" value="0" min="0" step="8"> GiB per GPU</label></div><div id="grid-table"></div></details>`;
  if (state.gridOpen) loadGrid(state.seq);
}

async function loadGrid(seq) {
  const fit = requestFor("fit").body;
  const body = { model: fit.model, "all-gpus": true, engine: fit.engine && fit.engine !== "llama.cpp" ? fit.engine : "vllm", context: fit.context, batch: fit.batch || 1 };
  $("#grid-table").textContent = "Planning every GPU…";
  busy(1);
  try {
    const result = await api("fit", body);
    if (seq !== state.seq) return;
    state.grid = gridRows(result, state.gpus);
    showGrid();
  } catch (e) { $("#grid-table").textContent = e.message; } finally { busy(-1); }
}

function showGrid() {
  // The vendors, once the GPU list is in (Fit's first answer may come before it).
  const vendor = $("#grid-vendor");
  if (vendor && vendor.options.length === 1) vendor.insertAdjacentHTML("beforeend", [...new Set(state.gpus.map((g) => g.vendor))].map((v) => `<option>${escapeHtml(v)}</option>`).join(""));
  if (state.grid && $("#grid-table")) $("#grid-table").innerHTML = gridHtml(state.grid, $("#grid-vendor").value, Number($("#grid-min").value || 0));
}

async function renderCompare(body) {
  const models = [body.model, ...["model2", "model3", "model4"].map((n) => localValue("compare", n).trim()).filter(Boolean)];
  return compare({ models: [...new Set(models)], context: body.context, batch: body.batch, gpu: body.gpu, ram: body.ram, ggufFile: body["gguf-file"] });
}

// After an error the previous answer is not left on the page as if it were this one's.
function clearResults() {
  state.result = null;
  state.table = null;
  $("#results").hidden = true;
  drawChart(null);
}

// A repository with several GGUF files: its files to choose from (sent as "gguf-file").
function offerGgufFiles(names) {
  const select = $("#gguf-file");
  const current = select.value;
  select.innerHTML = `<option value="">choose a file…</option>${names.map((n) => `<option value="${escapeHtml(n)}">${escapeHtml(n)}</option>`).join("")}`;
  if (names.includes(current)) select.value = current;
  state.ggufModel = $("#model").value.trim();
  $("#gguf-row").hidden = false;
  ggufOnly();
}

// A new model forgets the previous one's GGUF file.
function forgetGgufFile() {
  if (state.ggufModel === $("#model").value.trim() || $("#gguf-row").hidden) return;
  $("#gguf-file").innerHTML = "";
  $("#gguf-row").hidden = true;
}

async function recompute() {
  const seq = ++state.seq;
  const mode = currentMode();
  const { command, body, hardware, verdict } = requestFor(mode);
  if (!body.model) { saveToUrl(); return; }
  const started = performance.now();
  const status = $("#status");
  status.className = ""; status.textContent = "Estimating…";
  busy(1);
  try {
    if (timings.firstRender === null) performance.mark("memfit:ask");
    const asked = mode === "compare" ? renderCompare(body) : api(command, body);
    // Load's headline gives fit's verdict for loading on the chosen GPU; an error there leaves
    // the load table standing, without a verdict.
    const fitAsked = verdict ? api("fit", verdict).catch(() => null) : null;
    saveToUrl();  // while the server answers
    const compared = mode === "compare" ? await asked : null;
    const result = compared ? compared.result : await asked;
    if (timings.firstRender === null) performance.mark("memfit:answer");
    if (seq !== state.seq) return;
    state.result = result;
    $("#results").hidden = false;
    if (state.lastMode !== mode) { drawChart(null); state.lastMode = mode; }
    renderNotes(isLlamaCppFit(result) ? result.estimate : result, mode);
    let done;
    $("#post").disabled = Boolean(compared);  // a comparison belongs to no one model's discussions
    if (compared) {
      headline(compared.verdict, [compared.verdict ? "" : compared.result.model]);
      $("#table").innerHTML = compared.html;
      $("#extra").innerHTML = "";
      state.table = compared.table;
      done = drawChart(compared.chart, compared.result.model);
    } else if (mode === "inference") done = renderInference(result, body, seq, hardware);
    else if (mode === "load") {
      // The table first; the verdict joins the headline when fit answers (not holding the first render).
      done = Promise.all([renderLoad(result, hardware), fitAsked && fitAsked.then((fit) => { if (seq === state.seq && fit) loadHeadline(result, fit, hardware); })]);
    }
    else done = (mode === "train" ? renderTrain : renderFit)(result, hardware);
    if (state.table) state.table.settings = settingsOf(mode, body, result);
    const ms = performance.now() - started;
    if (timings.firstRender === null) { timings.firstRender = performance.now(); firstRendered(); }
    else timings.recomputes.push({ mode, ms });
    status.textContent = "";
    rememberModel(body.model);
    await done;
  } catch (e) {
    if (seq === state.seq) {
      const choices = ggufChoices(e.message);
      if (choices.length) offerGgufFiles(choices);
      status.className = "error";
      status.textContent = pageError(e.message, mode);
      clearResults();
    }
  } finally { busy(-1); }
}

// The page is busy (body[data-busy="1"]) from the moment a recompute is scheduled, not only
// while it runs: a tab click schedules one on the next tick, and whoever waits for the answer
// (a test, a screen reader's live region) must not read the old one in between.
let timer = null;
function schedule(delay = 150) {
  if (timer === null) busy(1);
  else clearTimeout(timer);
  timer = setTimeout(() => { timer = null; recompute(); busy(-1); }, delay);
}

function applyAdvice(index) {
  const result = state.result;
  const advice = result && result.advice && result.advice[index];
  const setting = advice && adviceSetting(advice.action, result.task, advice.flags);
  if (!setting) return;
  const fit = modeValues("fit");
  if (setting.model) { $("#model").value = setting.model; forgetGgufFile(); }
  if (setting.mode === "inference") { setControl("inference", "context", fit.context ?? ""); setControl("inference", "batch", fit.batch ?? 1); syncSlider(); }
  for (const [name, value] of Object.entries(setting.set)) setControl(setting.mode, name, value);
  setMode(setting.mode);
  recompute();
}

// The slider follows the exact box; an empty box (the API's default) shows the default.
function syncSlider(answered) {
  const typed = Number($("#inference-context").value);
  const context = typed || answered || DEFAULTS.serveContext;
  $("#ctx-slider").value = String(contextToSlider(context));
  $("#ctx-out").textContent = formatTokens(context);
}

// Fit with an engine plans a serving deployment: task and weights dtype do not apply; nor do
// dtype, quantization, KV dtype, attention and tensor parallel to llama.cpp (the GGUF as stored).
function syncFitControls() {
  const engine = Boolean(localValue("fit", "engine"));
  for (const name of ["task", "dtype"]) $(`fieldset[data-for="fit"] [name="${name}"]`).disabled = engine;
  const llama = localValue("inference", "engine") === "llama.cpp";
  for (const name of ["dtype", "quant", "kv-dtype", "attn", "tp"]) $(`fieldset[data-for="inference"] [name="${name}"]`).disabled = llama;
  showContextDefaults();
}

// llama.cpp reads GGUF files: offered for GGUF repositories (or a chosen GGUF file) only.
function ggufOnly() {
  const gguf = /gguf/i.test($("#model").value) || Boolean($("#gguf-file").value);
  $("#engine-llamacpp").disabled = !gguf;
  $("#fit-llamacpp").disabled = !gguf;
}

// Controls the user changed: the option table's defaults, arriving later, leave them alone.
const touched = new Set();

function wire() {
  const tabs = $$(".modes button");
  tabs.forEach((b, i) => {
    b.addEventListener("click", () => { setMode(b.dataset.mode); schedule(0); });
    b.addEventListener("keydown", (e) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
      if (!step) return;
      const next = tabs[(i + step + tabs.length) % tabs.length];
      setMode(next.dataset.mode, true);
      schedule(0);
    });
  });
  $("#form").addEventListener("submit", (e) => { e.preventDefault(); schedule(0); });
  $("#form").addEventListener("input", (e) => {
    const fieldset = e.target.closest("fieldset[data-for]");
    if (fieldset && e.target.name) touched.add(`${fieldset.dataset.for}.${e.target.name}`);
    if (e.target.getAttribute("list") === "model-list") {
      if (e.target.id === "model") { forgetGgufFile(); ggufOnly(); }
      // Only whole names: a half-typed Hub id is not worth a request to the Hub.
      const v = e.target.value.trim();
      if (isCatalogModel(v) || recentModels().includes(v)) schedule(0);
      else searchHub(v);
      return;
    }
    if (e.target.id === "ctx-slider") { $("#inference-context").value = String(sliderToContext(Number(e.target.value))); $("#ctx-out").textContent = formatTokens($("#inference-context").value); }
    if (e.target.id === "inference-context") syncSlider();
    if (e.target.name === "engine" || e.target.name === "task") syncFitControls();
    if (e.target.id === "gguf-file") { ggufOnly(); schedule(0); return; }
    schedule();
  });
  $("#form").addEventListener("change", (e) => { if (e.target.getAttribute("list") === "model-list") schedule(0); });
  $("#extra").addEventListener("toggle", (e) => { if (e.target.id === "grid") { state.gridOpen = e.target.open; if (e.target.open && !state.grid) loadGrid(state.seq); } }, true);
  $("#extra").addEventListener("input", (e) => { if (e.target.id === "grid-vendor" || e.target.id === "grid-min") showGrid(); });
  $("#table").addEventListener("click", (e) => { if (e.target.matches("button.apply")) applyAdvice(Number(e.target.dataset.advice)); });
  $("#share").addEventListener("click", async () => {
    const url = saveToUrl();
    try { await navigator.clipboard.writeText(url); $("#status").textContent = "Link copied"; } catch (_) { $("#status").textContent = url; }
  });
  wireExports(() => ({ result: state.result, table: state.table }));
  window.addEventListener("hashchange", () => { if (restoreFromUrl()) { afterRestore(); schedule(0); } });
}

function afterRestore() {
  const model = $("#model").value.trim();
  if ($("#gguf-file").value) { $("#gguf-row").hidden = false; state.ggufModel = model; }
  else if (state.ggufModel !== model) $("#gguf-row").hidden = true;  // files offered for this model stay
  syncSlider();
  ggufOnly();
  syncFitControls();
}

function fillGpus(list) {
  state.gpus = list;
  const options = list.map((g) => `<option value="${escapeHtml(g.name)}">${escapeHtml(g.name)} · ${formatBytes(g.memory_bytes)}</option>`).join("");
  const hw = $("#hw-gpu");
  const chosen = hw.value;
  hw.innerHTML = `<option value="">none: no verdict</option>${options}`;
  hw.value = chosen;
  $("#inference-gpus").innerHTML = options;
  for (const o of $("#inference-gpus").options) o.selected = o.value === DEFAULTS.gpu || o.value === "H100 SXM";
}

// The option table's defaults (when the server has one) for the controls neither the link nor the
// user set; a change recomputes.
async function takeOptionDefaults(hash) {
  const defaults = await optionDefaults();
  if (!defaults) return;
  let changed = false;
  for (const [mode, values] of Object.entries(defaults)) {
    for (const [name, value] of Object.entries(values)) {
      const el = $(`fieldset[data-for="${mode}"] [name="${name}"]`);
      if (!el || hashSets(mode, name, hash) || touched.has(`${mode}.${name}`) || el.value === String(value)) continue;
      applyDefaults({ [mode]: { [name]: value } });
      changed = changed || el.value === String(value);
    }
  }
  if (changed && $("#model").value.trim()) schedule(0);
}

async function init() {
  performance.mark("memfit:start");
  wire();
  busy(1);
  // Every mode's first answer is asked for at once: the hardware's GPU is the default (or the
  // link's) before the GPU list is in, and the list is put in the page after the answer is shown;
  // only llama.cpp inference without a hardware GPU takes the chart's first GPU, so it waits for
  // the list. The URL is restored again once the list is in (its GPU choices need the options).
  // The catalog only feeds suggestions: it is asked for last.
  const embedded = document.getElementById("gpu-list");  // the server's copy of GET gpus
  const list = (embedded ? Promise.resolve(JSON.parse(embedded.textContent)) : apiGet("gpus")).then((g) => g.gpus || [], () => []);
  const hash = location.hash;
  applyDefaults();
  setControl("hardware", "gpu", DEFAULTS.gpu);
  let restored = restoreFromUrl(hash);
  afterRestore();
  const needsGpus = currentMode() === "inference" && localValue("inference", "engine") === "llama.cpp" && !localValue("hardware", "gpu");
  const first = restored && !needsGpus ? recompute() : null;
  const gpus = (first ? Promise.all([list, Promise.race([firstRender, first])]).then(([l]) => l) : list).then(fillGpus);
  state.gpusReady = gpus;
  await gpus;
  performance.mark("memfit:gpus");
  restored = restoreFromUrl(hash);
  if (first) saveToUrl();  // the first request saved the form before the GPU choices were in
  afterRestore();
  busy(-1);
  takeOptionDefaults(hash);
  if (first) await first;
  else if (restored) await recompute();
  apiGet("models").then(setCatalog, () => setCatalog([]));
}

init();
