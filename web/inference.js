// Inference mode: the per-GPU memory at one setting, and memory against context for the same
// settings (inference calls at sampled contexts; the point where a GPU stops fitting is found by
// bisection on the API's own answers, never by extrapolating).
import { api } from "./api.js";
import { formatBytes, formatTokens, tableHtml, escapeHtml } from "./util.js";

export const SERVING_ENGINES = ["vllm", "sglang"];

// The slider is log2-scaled in quarter steps: position p is 2^(p/4) tokens, rounded.
export const sliderToContext = (p) => { const c = Math.round(2 ** (p / 4)); return c > 1024 ? Math.round(c / 128) * 128 : c; };
export const contextToSlider = (c) => Math.round(4 * Math.log2(Math.max(1, c)));

// What the curve shows: transformers holds everything per GPU, so the total against the GPU's
// memory; vLLM and SGLang pre-allocate a KV pool, so the batch's KV cache against that pool.
function metricOf(engine) {
  return SERVING_ENGINES.includes(engine)
    ? { name: "KV cache for the batch", bytes: (r) => r.per_gpu.kv_cache }
    : { name: "total per GPU", bytes: (r) => r.total_bytes };
}

function sampleContexts(maxContext, current) {
  const set = new Set([Math.min(256, maxContext), maxContext, Math.min(current, maxContext)]);
  for (let c = 512; c < maxContext; c *= 2) set.add(c);
  return [...set].sort((a, b) => a - b);
}

// The largest context whose bytes stay within `limit`, null when every context fits; 0 when none.
async function crossing(points, limit, measure) {
  const fits = points.filter((p) => p.bytes <= limit);
  if (fits.length === points.length) return null;
  if (!fits.length) return 0;
  let lo = fits[fits.length - 1].context;
  let hi = points.find((p) => p.bytes > limit).context;
  // Several probes per round, asked at once: rounds, not calls, cost the latency.
  const probes = 3;
  while (hi - lo > 1) {
    const step = (hi - lo) / (probes + 1);
    const xs = [...new Set(Array.from({ length: probes }, (_, i) => Math.floor(lo + step * (i + 1))))].filter((x) => x > lo && x < hi);
    if (!xs.length) xs.push(Math.floor((lo + hi) / 2));
    const bytes = await Promise.all(xs.map(measure));
    const over = bytes.findIndex((b) => b > limit);
    if (over === -1) lo = xs[xs.length - 1];
    else { hi = xs[over]; if (over > 0) lo = xs[over - 1]; }
  }
  return lo;
}

// gpus: [{name, memory_bytes}] from the GPU catalog.
export async function inferenceCurve(body, maxContext, gpus) {
  const metric = metricOf(body.engine);
  const measure = async (context) => metric.bytes(await api("inference", { ...body, context }));
  const contexts = sampleContexts(maxContext, body.context);
  const points = await Promise.all(contexts.map(async (context) => ({ context, bytes: await measure(context) })));
  const lines = [];
  for (const gpu of gpus) {
    let bytes = gpu.memory_bytes, label = gpu.name;
    if (SERVING_ENGINES.includes(body.engine)) {
      const plan = await api("fit", { model: body.model, gpu: gpu.name, engine: body.engine, context: body.context,
        batch: body.batch, "kv-dtype": body["kv-dtype"], quant: body.quant, tp: body.tp });
      const row = plan.rows && plan.rows[0];
      if (!row || !row.runs || !row.kv_pool_bytes) { lines.push({ gpu: label, bytes: 0, crossing: 0, note: row ? row.refusal || row.verdict : "no plan" }); continue; }
      bytes = row.kv_pool_bytes; label = `${gpu.name} KV pool`;
    }
    lines.push({ gpu: label, bytes, crossing: await crossing(points, bytes, measure) });
  }
  return { metric: metric.name, points, lines, maxContext,
    title: `${metric.name} against context (batch ${body.batch}, ${body.engine})` };
}

export function inferenceTables(result) {
  const rows = result.components.map((c) => [c.name, formatBytes(c.bytes)]);
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
  return tableHtml(["GPU", "budget", "longest context that fits"], curve.lines.map((l) => [l.gpu, l.bytes ? formatBytes(l.bytes) : "—",
    l.note ? l.note : l.crossing === null ? `all ${formatTokens(curve.maxContext)} (the model's maximum)` : l.crossing === 0 ? "none" : { html: `<span class="crossing">${escapeHtml(formatTokens(l.crossing))}</span>` }]),
    "Where each GPU stops fitting");
}
