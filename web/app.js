// memfit's web page: one form, four modes, results from the JSON API (the same JSON as the CLI's
// --format json). State lives in the URL hash so a link restores it. No network but the server.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
const state = { mode: "load", result: null, request: null };
let chart = null;

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
function formatBytes(bytes) {
  if (bytes === null || bytes === undefined) return "N/A";
  let value = Number(bytes), unit = 0;
  if (value < 1024) return `${value} B`;
  while (value >= 1024 && unit < UNITS.length - 1) { value /= 1024; unit++; }
  return `${value.toFixed(2)} ${UNITS[unit]}`;
}
const gib = (bytes) => Number(bytes) / 2 ** 30;

function setMode(mode) {
  state.mode = mode;
  for (const b of $$(".modes button")) b.setAttribute("aria-selected", String(b.dataset.mode === mode));
  for (const f of $$("fieldset[data-for]")) f.hidden = f.dataset.for !== mode;
}

// The request for the current form: {command, body}.
function buildRequest() {
  const model = $("#model").value.trim();
  const body = { model };
  const fieldset = $(`fieldset[data-for="${state.mode}"]`);
  if (state.mode === "load") {
    body.dtypes = $$('input[name="dtypes"]:checked', fieldset).map((c) => c.value);
    if ($('input[name="accelerate"]', fieldset).checked) {
      // accelerate knows float32, float16, int8 and int4 only.
      body.accelerate = true;
      body.dtypes = body.dtypes.filter((d) => d !== "bfloat16");
    }
    return { command: "estimate-memory", body };
  }
  for (const el of $$("input, select", fieldset)) {
    if (!el.name || el.value === "") continue;
    body[el.name] = el.type === "number" ? Number(el.value) : el.value;
  }
  return { command: state.mode, body };
}

function saveToUrl() {
  const params = new URLSearchParams();
  params.set("mode", state.mode);
  params.set("model", $("#model").value.trim());
  for (const el of $$("fieldset[data-for] input, fieldset[data-for] select")) {
    if (!el.name) continue;
    const key = `${el.closest("fieldset").dataset.for}.${el.name}${el.type === "checkbox" ? "." + el.value : ""}`;
    params.set(key, el.type === "checkbox" ? (el.checked ? "1" : "0") : el.value);
  }
  history.replaceState(null, "", `#${params.toString()}`);
  return location.href;
}

function restoreFromUrl() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (!params.has("model")) return false;
  $("#model").value = params.get("model");
  setMode(params.get("mode") || "load");
  for (const el of $$("fieldset[data-for] input, fieldset[data-for] select")) {
    const key = `${el.closest("fieldset").dataset.for}.${el.name}${el.type === "checkbox" ? "." + el.value : ""}`;
    if (!params.has(key)) continue;
    if (el.type === "checkbox") el.checked = params.get(key) === "1";
    else el.value = params.get(key);
  }
  return true;
}

async function api(command, body) {
  const response = await fetch(`api/v1/${command}`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(json.error || `HTTP ${response.status}`);
  return json;
}

// Rows for the results table and the CSV export: [[label, value], ...] or a header + rows.
function tableFor(result) {
  if (result.schema && result.schema.startsWith("memfit.estimate-memory")) {
    return {
      headers: ["dtype", "Load", "Largest block", "Training (AdamW)"],
      rows: result.rows.map((r) => [r.dtype, formatBytes(r.total_bytes), formatBytes(r.largest_block_bytes),
        r.training_adam_bytes === null ? "N/A" : formatBytes(r.training_adam_bytes)]),
      raw: result.rows.map((r) => [r.dtype, r.total_bytes, r.largest_block_bytes, r.training_adam_bytes]),
    };
  }
  if (result.schema && result.schema.startsWith("memfit.accelerate")) {
    return {
      headers: ["dtype", "Largest Layer", "Total Size", "Training using Adam"],
      rows: result.rows.map((r) => [r.dtype, r.strings.largest_layer, r.strings.total_size, r.strings.training_adam]),
      raw: result.rows.map((r) => [r.dtype, r.largest_layer_bytes, r.total_size_bytes, r.training_adam_bytes]),
    };
  }
  const devices = devicesOf(result);
  if (devices.length) {
    const names = [...new Set(devices.flatMap((d) => d.components.map((c) => c.name)))];
    return {
      headers: ["component", ...devices.map((d) => d.name)],
      rows: names.map((n) => [n, ...devices.map((d) => formatBytes((d.components.find((c) => c.name === n) || {}).bytes ?? 0))])
        .concat([["total", ...devices.map((d) => formatBytes(d.total))]]),
      raw: names.map((n) => [n, ...devices.map((d) => (d.components.find((c) => c.name === n) || {}).bytes ?? 0)]),
    };
  }
  const flat = Object.entries(result).filter(([, v]) => typeof v === "number");
  return { headers: ["field", "value"], rows: flat.map(([k, v]) => [k, k.endsWith("bytes") ? formatBytes(v) : String(v)]),
    raw: flat };
}

// Devices with memory components, from inference/train/fit results: [{name, components, total}].
function devicesOf(result) {
  const list = result.devices || result.per_device || (result.plan && result.plan.devices) || null;
  const toComponents = (obj) => (Array.isArray(obj) ? obj : Object.entries(obj || {}).map(([name, bytes]) => ({ name, bytes })))
    .filter((c) => typeof c.bytes === "number");
  if (Array.isArray(list)) {
    return list.map((d, i) => {
      let components = toComponents(d.components || d.breakdown || {});
      // Fit plans give each device's used bytes (weights placed there plus runtime).
      if (!components.length && typeof d.used_bytes === "number" && d.used_bytes > 0) {
        components = [{ name: "placed", bytes: d.used_bytes }];
      }
      return { name: d.label || d.name || (d.device !== undefined ? String(d.device) : `device ${i}`), components,
        total: d.total_bytes ?? components.reduce((s, c) => s + c.bytes, 0) };
    }).filter((d) => d.components.length);
  }
  const components = toComponents(result.components || result.breakdown || null);
  if (components.length) return [{ name: "per GPU", components, total: result.total_bytes ?? components.reduce((s, c) => s + c.bytes, 0) }];
  return [];
}

const PALETTE = ["#2f6fde", "#e07b39", "#3aa675", "#c2415d", "#8a5cd1", "#d4a72c", "#4bb3c9", "#7a7f8c", "#b5651d", "#5c946e"];

function drawChart(result) {
  const canvas = $("#chart-main");
  if (chart) { chart.destroy(); chart = null; }
  if (typeof Chart === "undefined") return;
  let config = null;
  if (result.rows && result.schema && result.schema.includes("estimate-memory")) {
    config = { type: "bar", data: { labels: result.rows.map((r) => r.dtype), datasets: [
      { label: "Load (GiB)", data: result.rows.map((r) => gib(r.total_bytes)), backgroundColor: PALETTE[0] },
      { label: "Training with AdamW (GiB)", data: result.rows.map((r) => r.training_adam_bytes === null ? null : gib(r.training_adam_bytes)), backgroundColor: PALETTE[1] },
    ] }, options: { maintainAspectRatio: false, plugins: { title: { display: true, text: "Memory by dtype" } } } };
  } else if (result.rows && result.schema && result.schema.includes("accelerate")) {
    config = { type: "bar", data: { labels: result.rows.map((r) => r.dtype), datasets: [
      { label: "Total Size (GiB)", data: result.rows.map((r) => gib(r.total_size_bytes)), backgroundColor: PALETTE[0] }] },
      options: { maintainAspectRatio: false } };
  } else {
    const devices = devicesOf(result);
    if (devices.length) {
      const names = [...new Set(devices.flatMap((d) => d.components.map((c) => c.name)))];
      config = { type: "bar", data: { labels: devices.map((d) => d.name), datasets: names.map((n, i) => ({
        label: n, backgroundColor: PALETTE[i % PALETTE.length],
        data: devices.map((d) => gib((d.components.find((c) => c.name === n) || {}).bytes ?? 0)) })) },
        options: { maintainAspectRatio: false, scales: { x: { stacked: true }, y: { stacked: true, title: { display: true, text: "GiB" } } },
          plugins: { title: { display: true, text: "Memory per device" } } } };
    }
  }
  if (config) chart = new Chart(canvas, config);
  canvas.closest("figure").hidden = !config;
}

function renderTable(t) {
  const head = `<tr>${t.headers.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr>`;
  const body = t.rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`).join("");
  $("#table").innerHTML = `<table>${head}${body}</table>`;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function renderVerdict(result) {
  const v = $("#verdict");
  v.className = "";
  const verdict = result.verdict || (result.plan && result.plan.verdict);
  if (verdict) {
    v.textContent = String(verdict) + (result.gpus_needed ? ` · ${result.gpus_needed} GPU(s) needed` : "");
    v.className = /not|does/.test(verdict) ? "nofit" : /offload/.test(verdict) ? "offload" : "fits";
  } else if (result.parameters !== undefined) {
    v.textContent = `${result.model}: ${(result.parameters / 1e9).toFixed(2)}B parameters, ${formatBytes(result.stored_bytes)} stored`;
  } else {
    v.textContent = result.model || "";
  }
  const map = result.device_map || (result.plan && result.plan.device_map);
  $("#devicemap").innerHTML = map ? `<h3>device_map</h3><pre>${escapeHtml(JSON.stringify(map, null, 1))}</pre>` : "";
  const items = [...(result.assumptions || []).map((a) => `assumption: ${a}`), ...(result.notes || []).map((n) => `note: ${n}`)];
  $("#assumptions").innerHTML = items.map((i) => `<li>${escapeHtml(i)}</li>`).join("");
}

function toCsv(t) {
  const cell = (c) => (/[",\n]/.test(String(c)) ? `"${String(c).replace(/"/g, '""')}"` : String(c ?? ""));
  return [t.headers, ...t.raw].map((r) => r.map(cell).join(",")).join("\n") + "\n";
}

function toMarkdown(result) {
  const t = tableFor(result);
  const lines = [`## Memory requirements for \`${result.model || $("#model").value}\``, "",
    `| ${t.headers.join(" | ")} |`, `|${t.headers.map((_, i) => (i ? "---:" : "---")).join("|")}|`,
    ...t.rows.map((r) => `| ${r.join(" | ")} |`), "",
    `Estimated by [memfit](https://github.com/) from the model's metadata (${result.source || "memfit"}).`];
  return lines.join("\n") + "\n";
}

function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url; a.download = name; document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

async function run(event) {
  if (event) event.preventDefault();
  const request = buildRequest();
  if (!request.body.model) return;
  saveToUrl();
  const status = $("#status");
  status.className = ""; status.textContent = "Estimating…";
  try {
    const result = await api(request.command, request.body);
    state.result = result; state.request = request;
    $("#results").hidden = false;
    renderVerdict(result);
    renderTable(tableFor(result));
    drawChart(result);
    status.textContent = "";
  } catch (e) {
    status.className = "error"; status.textContent = e.message;
  }
}

async function init() {
  for (const b of $$(".modes button")) b.addEventListener("click", () => setMode(b.dataset.mode));
  $("#form").addEventListener("submit", run);
  for (const b of $$("[data-export]")) {
    b.addEventListener("click", async () => {
      if (!state.result) return;
      const name = (state.result.model || "model").replace(/[^\w.-]+/g, "_");
      if (b.dataset.export === "json") download(`${name}.memfit.json`, JSON.stringify(state.result, null, 2), "application/json");
      if (b.dataset.export === "csv") download(`${name}.memfit.csv`, toCsv(tableFor(state.result)), "text/csv");
      if (b.dataset.export === "markdown") {
        const md = toMarkdown(state.result);
        try { await navigator.clipboard.writeText(md); } catch (_) { /* clipboard needs a secure context */ }
        download(`${name}.memfit.md`, md, "text/markdown");
      }
    });
  }
  $("#share").addEventListener("click", async () => {
    const url = saveToUrl();
    try { await navigator.clipboard.writeText(url); $("#status").textContent = "Link copied"; } catch (_) { $("#status").textContent = url; }
  });
  $("#post").addEventListener("click", () => {
    if (!state.result) return;
    $("#post-repo").textContent = state.result.model;
    $("#post-body").textContent = toMarkdown(state.result);
    $("#post-status").textContent = "";
    $("#post-dialog").showModal();
  });
  $("#post-confirm").addEventListener("click", async (e) => {
    e.preventDefault();
    const token = $("#post-token").value.trim();
    try {
      const response = await fetch("api/v1/hub/discussion", {
        method: "POST", headers: { "Content-Type": "application/json", Authorization: token ? `Bearer ${token}` : "" },
        body: JSON.stringify({ model: state.result.model, revision: "main", title: "[memfit] Model memory requirements",
          description: $("#post-body").textContent }),
      });
      const json = await response.json();
      $("#post-status").textContent = response.ok ? `Posted: ${json.url || "done"}` : json.error;
    } catch (err) { $("#post-status").textContent = err.message; }
  });
  try {
    const models = await (await fetch("api/v1/models")).json();
    if (Array.isArray(models)) $("#model-list").innerHTML = models.map((m) => `<option value="${escapeHtml(m.id)}">`).join("");
  } catch (_) { /* suggestions are optional */ }
  try {
    const gpus = await (await fetch("api/v1/gpus")).json();
    const list = Array.isArray(gpus) ? gpus : gpus.gpus || [];
    $("#gpu-select").innerHTML = list.map((g) => `<option value="${escapeHtml(g.id || g.name)}">${escapeHtml(g.name)}${g.memory_bytes ? " · " + formatBytes(g.memory_bytes) : ""}</option>`).join("")
      || '<option value="24GiB">24 GiB</option>';
    const preferred = $$("#gpu-select option").find((o) => /4090/.test(o.value + o.textContent));
    if (preferred) $("#gpu-select").value = preferred.value;
  } catch (_) { $("#gpu-select").innerHTML = '<option value="24GiB">24 GiB</option>'; }
  // Estimates need the GPU list (fit mode sends the chosen GPU): the button waits for it.
  $("#run").disabled = false;
  if (restoreFromUrl()) run();
}

init();
