// memfit's web page: the form is the state (state.js, kept in the URL hash); any change recomputes
// after a short pause; each mode renders the API's JSON (docs/json.md) with its own module.
import { $, $$, formatBytes, formatTokens, escapeHtml, verdictClass } from "./util.js";
import { api, apiGet } from "./api.js";
import { currentMode, setMode, saveToUrl, restoreFromUrl, modeValues, setControl, localValue } from "./state.js";
import { drawChart, contextChart, stageChart } from "./charts.js";
import { loadTable, loadChart } from "./load.js";
import { inferenceCurve, inferenceTables, llamaCppTables, curveTable, sliderToContext, contextToSlider } from "./inference.js";
import { stageParts, trainTables } from "./train.js";
import { fitTables, deployTable, adviceSetting, gridRows, gridHtml } from "./fit.js";
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

function requestFor(mode) {
  const model = $("#model").value.trim();
  if (mode === "load") {
    const body = { model, dtypes: $$('fieldset[data-for="load"] input[name="dtypes"]:checked').map((c) => c.value) };
    if ($('input[name="accelerate"]').checked) {
      body.accelerate = true;  // accelerate knows float32, float16, int8 and int4 only
      body.dtypes = body.dtypes.filter((d) => d !== "bfloat16");
    }
    return { command: "estimate-memory", body };
  }
  const body = { model, ...modeValues(mode) };
  if (mode === "inference" && body.engine === "llama.cpp") {
    // llama.cpp runs the GGUF file as stored: no dtype, quantization, attention or tensor-parallel
    // choice; its devices are the first GPU chosen for the chart.
    for (const name of ["quant", "dtype", "attn", "tp", "kv-dtype"]) delete body[name];
    const gpu = localValue("inference", "gpus").split(",").filter(Boolean)[0];
    if (gpu) body.gpu = gpu;
  }
  if (mode === "fit") {
    const count = Number(body.count || 1);
    delete body.count;
    if (count > 1) body.gpu = `${count}x${body.gpu}`;
    if (body.engine) { delete body.ram; delete body.dtype; delete body.task; }
    else if (body.task === "load") { delete body.context; delete body.batch; }
  }
  return { command: mode, body };
}

function tableOf(headers, rows) { return { headers, rows: rows.map((r) => r.map(String)), raw: rows }; }

function setVerdict(text, cls = "") {
  const v = $("#verdict");
  v.textContent = text;
  v.className = cls;
}

function renderNotes(result) {
  const items = [...(result.assumptions || []).map((a) => `assumption: ${a}`), ...(result.notes || []).map((n) => `note: ${n}`)];
  $("#assumptions").innerHTML = items.map((i) => `<li>${escapeHtml(i)}</li>`).join("");
}

function renderLoad(result) {
  const t = loadTable(result);
  state.table = t;
  setVerdict(result.parameters !== undefined ? `${result.model}: ${(result.parameters / 1e9).toFixed(2)}B parameters, ${formatBytes(result.stored_bytes)} stored` : result.model);
  $("#table").innerHTML = `<table><thead><tr>${t.headers.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join("")}</tr></thead><tbody>${t.rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
  $("#extra").innerHTML = "";
  return drawChart(loadChart(result), `Memory of ${result.model} by dtype`);
}

function selectedGpus() {
  const names = localValue("inference", "gpus").split(",").filter(Boolean);
  return state.gpus.filter((g) => names.includes(g.name));
}

async function renderInference(result, body, seq) {
  if (result.devices) {  // llama.cpp: per device
    state.table = tableOf(["device", "layers", "model_bytes", "kv_bytes", "compute_bytes", "total_bytes"], result.devices.map((d) => [d.name, d.layers, d.model_bytes, d.kv_bytes, d.compute_bytes, d.total_bytes]));
    const gpus = result.devices.filter((d) => !d.host);
    const largest = Math.max(0, ...gpus.map((d) => d.total_bytes));
    setVerdict(`${gpus.length ? `${formatBytes(largest)} on the largest GPU` : "CPU only"} · ${formatTokens(result.n_ctx)} tokens × ${result.n_seq} · llama.cpp`);
    $("#table").innerHTML = llamaCppTables(result);
  } else {
    state.table = tableOf(["component", "bytes per GPU"], [...result.components.map((c) => [c.name, c.bytes]), ["total", result.total_bytes]]);
    setVerdict(`${formatBytes(result.total_bytes)} per GPU · ${result.gpus} GPU(s) · ${formatTokens(result.settings.context)} tokens × ${result.settings.batch}`);
    $("#table").innerHTML = inferenceTables(result);
  }
  $("#extra").innerHTML = '<div id="curve-table"></div>';
  const maxContext = result.model_max_context || 131072;
  $("#ctx-slider").max = String(contextToSlider(maxContext));
  await state.gpusReady;  // the chart's GPU choices (the first answer may come before the list)
  if (seq !== state.seq) return;
  let curve;
  try { curve = await inferenceCurve(body, selectedGpus()); } catch (e) {
    if (seq === state.seq) { $("#curve-table").textContent = `No context curve: ${e.message}`; drawChart(null); }
    return;
  }
  if (seq !== state.seq) return;
  state.curve = curve;
  await drawChart(contextChart(curve), `${curve.title} for ${result.model}, up to the model's ${formatTokens(curve.maxContext)} tokens`);
  $("#curve-table").innerHTML = curveTable(curve);
}

function renderTrain(result) {
  state.table = tableOf(["stage", "allocated bytes"], result.stages.map((s) => [s.stage, s.bytes]));
  setVerdict(`peak ${formatBytes(result.total_bytes)} per GPU at the ${result.peak_stage} (${result.settings.method}, ${result.settings.optimizer}, ${result.settings.precision})`);
  $("#table").innerHTML = trainTables(result);
  $("#extra").innerHTML = "";
  return drawChart(stageChart(result.stages, stageParts(result), result.peak_stage, result.total_bytes), `Training stages of ${result.model}: the parts alive at each stage`);
}

function renderFit(result) {
  if (result.schema.startsWith("memfit.deploy")) {
    const r = result.rows[0] || {};
    setVerdict(r.verdict ? `${r.verdict} · ${r.gpus} × ${r.gpu} (${r.layout})` : "no deployment", verdictClass(r.verdict));
    $("#table").innerHTML = deployTable(result);
    state.table = tableOf(["gpu", "gpus", "layout", "verdict", "total_per_gpu_bytes", "max_context_tokens"], result.rows.map((x) => [x.gpu, x.gpus, x.layout, x.verdict, x.total_per_gpu_bytes, x.max_context_tokens]));
  } else {
    setVerdict(`${result.verdict} · ${formatBytes(result.total_bytes)} for ${result.task}` + (result.gpus_needed ? ` · ${result.gpus_needed} GPU(s) of this kind needed` : ""), verdictClass(result.verdict));
    $("#table").innerHTML = fitTables(result);
    state.table = tableOf(["advice", "total_bytes", "saved_bytes", "verdict"], (result.advice || []).map((a) => [a.action, a.total_bytes, a.saved_bytes, a.verdict]));
  }
  drawChart(null);
  $("#extra").innerHTML = `<details id="grid"${state.gridOpen ? " open" : ""}><summary>Runs on: every catalog GPU at 1, 2, 4 and 8</summary>
    <div class="grid-filters"><label>Vendor <select id="grid-vendor"><option value="">all</option>${[...new Set(state.gpus.map((g) => g.vendor))].map((v) => `<option>${escapeHtml(v)}</option>`).join("")}</select></label>
    <label>At least <input type="number" id="grid-min" value="0" min="0" step="8"> GiB per GPU</label></div><div id="grid-table"></div></details>`;
  if (state.gridOpen) loadGrid(state.seq);
}

async function loadGrid(seq) {
  const fit = requestFor("fit").body;
  const body = { model: fit.model, "all-gpus": true, engine: fit.engine || "vllm", context: fit.context || 8192, batch: fit.batch || 1 };
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
  if (state.grid && $("#grid-table")) $("#grid-table").innerHTML = gridHtml(state.grid, $("#grid-vendor").value, Number($("#grid-min").value || 0));
}

async function renderCompare(body) {
  const models = [body.model, ...["model2", "model3", "model4"].map((n) => localValue("compare", n).trim()).filter(Boolean)];
  const out = await compare({ models: [...new Set(models)], context: body.context, batch: body.batch, gpu: body.gpu });
  return out;
}

async function recompute() {
  const seq = ++state.seq;
  const mode = currentMode();
  const { command, body } = requestFor(mode);
  if (!body.model) { saveToUrl(); return; }
  const started = performance.now();
  const status = $("#status");
  status.className = ""; status.textContent = "Estimating…";
  busy(1);
  try {
    if (timings.firstRender === null) performance.mark("memfit:ask");
    const asked = mode === "compare" ? renderCompare(body) : api(command, body);
    saveToUrl();  // while the server answers
    const compared = mode === "compare" ? await asked : null;
    const result = compared ? compared.result : await asked;
    if (timings.firstRender === null) performance.mark("memfit:answer");
    if (seq !== state.seq) return;
    state.result = result;
    $("#results").hidden = false;
    if (state.lastMode !== mode) { drawChart(null); state.lastMode = mode; }
    renderNotes(result);
    let done;
    $("#post").disabled = Boolean(compared);  // a comparison belongs to no one model's discussions
    if (compared) {
      setVerdict(compared.result.model);
      $("#table").innerHTML = compared.html;
      $("#extra").innerHTML = "";
      state.table = compared.table;
      done = drawChart(compared.chart, compared.result.model);
    } else done = mode === "inference" ? renderInference(result, body, seq) : (mode === "load" ? renderLoad : mode === "train" ? renderTrain : renderFit)(result);
    const ms = performance.now() - started;
    if (timings.firstRender === null) { timings.firstRender = performance.now(); firstRendered(); }
    else timings.recomputes.push({ mode, ms });
    status.textContent = "";
    rememberModel(body.model);
    await done;
  } catch (e) {
    if (seq === state.seq) { status.className = "error"; status.textContent = e.message; }
  } finally { busy(-1); }
}

let timer = null;
function schedule(delay = 150) { clearTimeout(timer); timer = setTimeout(recompute, delay); }

function applyAdvice(index) {
  const result = state.result;
  const advice = result && result.advice && result.advice[index];
  const setting = advice && adviceSetting(advice.action, result.task);
  if (!setting) return;
  const fit = modeValues("fit");
  if (setting.model) $("#model").value = setting.model;
  if (setting.mode === "inference") { setControl("inference", "context", fit.context); setControl("inference", "batch", fit.batch); syncSlider(); }
  for (const [name, value] of Object.entries(setting.set)) setControl(setting.mode, name, value);
  setMode(setting.mode);
  recompute();
}

function syncSlider() {
  const context = Number($("#inference-context").value) || 1;
  $("#ctx-slider").value = String(contextToSlider(context));
  $("#ctx-out").textContent = formatTokens(context);
}

// Fit with an engine plans a serving deployment: task, weights dtype and CPU RAM do not apply; nor
// do dtype, quantization, KV dtype, attention and tensor parallel to llama.cpp (the GGUF as stored).
function syncFitControls() {
  const engine = Boolean(localValue("fit", "engine"));
  for (const name of ["task", "dtype", "ram"]) $(`fieldset[data-for="fit"] [name="${name}"]`).disabled = engine;
  const llama = localValue("inference", "engine") === "llama.cpp";
  for (const name of ["dtype", "quant", "kv-dtype", "attn", "tp"]) $(`fieldset[data-for="inference"] [name="${name}"]`).disabled = llama;
}

// llama.cpp reads GGUF files: offered for GGUF repositories only.
function ggufOnly() { $("#engine-llamacpp").disabled = !/gguf/i.test($("#model").value); }

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
    if (e.target.getAttribute("list") === "model-list") {
      // Only whole names: a half-typed Hub id is not worth a request to the Hub.
      const v = e.target.value.trim();
      if (isCatalogModel(v) || recentModels().includes(v)) schedule(0);
      else searchHub(v);
      return;
    }
    if (e.target.id === "ctx-slider") { $("#inference-context").value = String(sliderToContext(Number(e.target.value))); $("#ctx-out").textContent = formatTokens($("#inference-context").value); }
    if (e.target.id === "inference-context") syncSlider();
    if (e.target.name === "engine") syncFitControls();
    schedule();
  });
  $("#form").addEventListener("change", (e) => { if (e.target.getAttribute("list") === "model-list") schedule(0); });
  $("#model").addEventListener("input", ggufOnly);
  $("#extra").addEventListener("toggle", (e) => { if (e.target.id === "grid") { state.gridOpen = e.target.open; if (e.target.open && !state.grid) loadGrid(state.seq); } }, true);
  $("#extra").addEventListener("input", (e) => { if (e.target.id === "grid-vendor" || e.target.id === "grid-min") showGrid(); });
  $("#table").addEventListener("click", (e) => { if (e.target.matches("button.apply")) applyAdvice(Number(e.target.dataset.advice)); });
  $("#share").addEventListener("click", async () => {
    const url = saveToUrl();
    try { await navigator.clipboard.writeText(url); $("#status").textContent = "Link copied"; } catch (_) { $("#status").textContent = url; }
  });
  wireExports(() => ({ result: state.result, table: state.table }));
  window.addEventListener("hashchange", () => { if (restoreFromUrl()) { syncSlider(); syncFitControls(); schedule(0); } });
}

function fillGpus(list) {
  state.gpus = list;
  const options = list.map((g) => `<option value="${escapeHtml(g.name)}">${escapeHtml(g.name)} · ${formatBytes(g.memory_bytes)}</option>`).join("");
  $("#fit-gpu").innerHTML = options;
  $("#compare-gpu").innerHTML = options;
  $("#compare-gpu").value = "RTX 4090";
  $("#inference-gpus").innerHTML = options;
  $("#fit-gpu").value = "RTX 4090";
  for (const o of $("#inference-gpus").options) o.selected = o.value === "RTX 4090" || o.value === "H100 SXM";
}

async function init() {
  performance.mark("memfit:start");
  wire();
  busy(1);
  // Load, inference and train ask the API without the GPU list, so their first answer is asked
  // for at once and the list is put in the page after it is shown; fit, compare and llama.cpp
  // inference send a GPU chosen from it, so they wait for it. The URL is restored again once the list is in (its GPU
  // choices need the options). The catalog only feeds suggestions: it is asked for last.
  const embedded = document.getElementById("gpu-list");  // the server's copy of GET gpus
  const list = (embedded ? Promise.resolve(JSON.parse(embedded.textContent)) : apiGet("gpus")).then((g) => g.gpus || [], () => []);
  const hash = location.hash;
  let restored = restoreFromUrl(hash);
  syncSlider();
  ggufOnly();
  const needsGpus = ["fit", "compare"].includes(currentMode()) || (currentMode() === "inference" && localValue("inference", "engine") === "llama.cpp");
  const first = restored && !needsGpus ? recompute() : null;
  const gpus = (first ? Promise.all([list, Promise.race([firstRender, first])]).then(([l]) => l) : list).then(fillGpus);
  state.gpusReady = gpus;
  await gpus;
  performance.mark("memfit:gpus");
  restored = restoreFromUrl(hash);
  if (first) saveToUrl();  // the first request saved the form before the GPU choices were in
  syncSlider();
  ggufOnly();
  syncFitControls();
  busy(-1);
  if (first) await first;
  else if (restored) await recompute();
  apiGet("models").then(setCatalog, () => setCatalog([]));
}

init();
