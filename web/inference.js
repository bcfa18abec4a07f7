// Inference mode: the per-GPU memory at one setting, and memory against context for the same
// settings with the longest context on each chosen GPU: one API call (inference with "curve",
// docs/json.md), every point and crossing an exact estimate.
import { api } from "./api.js";
import { formatBytes, formatTokens, tableHtml, escapeHtml } from "./util.js";
import { label } from "./words.js";

export const SERVING_ENGINES = ["vllm", "sglang"];

// The slider is log2-scaled in quarter steps: position p is 2^(p/4) tokens, rounded.
export const sliderToContext = (p) => { const c = Math.round(2 ** (p / 4)); return c > 1024 ? Math.round(c / 128) * 128 : c; };
export const contextToSlider = (c) => Math.round(4 * Math.log2(Math.max(1, c)));

// gpus: [{name}] from the GPU catalog. transformers holds everything per GPU, so the curve is the
// total against the GPU's memory; vLLM and SGLang pre-allocate a KV pool, so it is the batch's KV
// cache against that pool.
export async function inferenceCurve(body, gpus) {
  const result = await api("inference", { ...body, curve: true, "curve-gpu": gpus.map((g) => g.name) });
  const c = result.curve;
  const paged = c.metric === "kv_cache";
  const metric = paged ? "KV cache for the batch" : c.metric === "largest_gpu" ? "largest GPU, every layer offloaded" : "total per GPU";
  // A GPU with no budget (vLLM's pool when the weights alone do not fit) is no line at 0 B: the
  // table says why instead.
  const limits = c.limits.map((l) => ({ gpu: paged ? `${l.gpu} KV pool` : l.gpu, bytes: l.budget_bytes,
    crossing: l.longest_context, note: l.note || "" }));
  const lines = limits.filter((l) => l.bytes > 0);
  return { metric, points: c.points, lines, limits, maxContext: c.max_context,
    title: `${metric} against context (batch ${body.batch}, ${body.engine})` };
}

// llama.cpp (GGUF): the API's per-device table (docs/json.md), as `memfit gguf inference`; a
// column that is zero on every device (no recurrent layers, no output buffer) is left out.
const DEVICE_COLUMNS = [["model", "model_bytes"], ["KV cache", "kv_bytes"], ["recurrent", "rs_bytes"], ["compute", "compute_bytes"],
  ["output", "output_bytes"], ["CUDA context", "context_bytes"]];

function deviceLayers(d) { return `${d.layers}${d.output_layer ? " + output" : ""}${d.host ? " + input" : ""}`; }

// {headers, rows (words), raw (bytes)} of the devices, for the page and its exports.
export function llamaCppTable(result) {
  const columns = DEVICE_COLUMNS.filter(([, key]) => result.devices.some((d) => d[key]));
  const headers = ["device", "layers", ...columns.map(([name]) => name), "total"];
  const raw = result.devices.map((d) => [d.name, deviceLayers(d), ...columns.map(([, key]) => d[key]), d.total_bytes]);
  return { headers, raw, rows: raw.map((r) => r.map((v, i) => (i >= 2 ? formatBytes(v) : v))) };
}

export function llamaCppTables(result) {
  const t = llamaCppTable(result);
  let html = tableHtml(t.headers, t.rows, "Memory per device (llama.cpp)");
  html += tableHtml(["fact", "value"], [["context", `${formatTokens(result.n_ctx)} tokens (${result.n_seq} sequence${result.n_seq === 1 ? "" : "s"})`],
    ["KV cache", `K ${formatBytes(result.kv_k_bytes)} + V ${formatBytes(result.kv_v_bytes)}`],
    ["layers on the GPU", `${result.offloaded_layers} of ${result.total_layers}`], ["flash attention", result.flash_attn ? "on" : "off"]]);
  return html;
}

export function inferenceTables(result) {
  const rows = result.components.filter((c) => c.bytes !== 0).map((c) => [label(c.name), formatBytes(c.bytes)]);
  rows.push(["total per GPU", formatBytes(result.total_bytes)]);
  let html = tableHtml(["component", "per GPU"], rows, "Memory per GPU at this setting");
  const facts = [["KV cache per token", formatBytes(result.kv_bytes_per_token)], ["GPUs", String(result.gpus)],
    ["prefill activation peak at", result.activation_peak_at || "—"]];
  if (result.serving) {
    facts.push(["KV page", formatBytes(result.serving.page_bytes)], ["one sequence's cache", formatBytes(result.serving.sequence_bytes)]);
  }
  html += tableHtml(["fact", "value"], facts);
  return html;
}

export function curveTable(curve) {
  return tableHtml(["GPU", "budget", "longest context that fits"], curve.limits.map((l) => [l.gpu, l.bytes ? formatBytes(l.bytes) : "none",
    l.note ? l.note : !l.bytes ? "none: the weights alone do not fit" : l.crossing === null ? `all ${formatTokens(curve.maxContext)} (the model's maximum)` : l.crossing === 0 ? "none" : { html: `<span class="crossing">${escapeHtml(formatTokens(l.crossing))}</span>` }]),
    "Where each GPU stops fitting");
}
