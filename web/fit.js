// Fit mode: the verdict, where each module goes (device map), limits, speed bounds, the ranked
// advice (with "apply" for the ones the page can set), and the "runs on" grid of every catalog GPU.
import { formatBytes, formatTokens, tableHtml, escapeHtml, verdictClass, formatCount } from "./util.js";
import { llamaCppTables } from "./inference.js";

// A device map longer than this is folded under the advice.
const MAP_ROWS_SHOWN = 8;

// An advice's `flags` ("--checkpointing full --optimizer adamw-8bit", docs/json.md) -> the page
// setting, when every flag is a control of one mode: train's for a training task, else Fit's
// (context, dtype, ...), else Inference's (quantization, KV cache). null otherwise.
export function settingFromFlags(flags, task, hasControl) {
  const pairs = [...String(flags || "").matchAll(/--([a-z][\w-]*)(?:[ =]([^\s-]\S*))?/g)].map((m) => [m[1], m[2] ?? "1"]);
  if (!pairs.length) return null;
  const modes = task === "train" ? ["train"] : ["fit", "inference"];
  const mode = modes.find((md) => pairs.every(([name]) => hasControl(md, name)));
  return mode ? { mode, set: Object.fromEntries(pairs) } : null;
}

const pageHasControl = (mode, name) => Boolean(document.querySelector(`fieldset[data-for="${mode}"] [name="${name}"]`));

// An advice -> the page setting that computes it: {mode, set: {control: value}, model?}: from its
// flags when it has them, else from its words. Actions the page has no control for (GGUF,
// pruning, offload) get no "apply".
export function adviceSetting(action, task, flags = "") {
  const fromFlags = flags ? settingFromFlags(flags, task, pageHasControl) : null;
  if (fromFlags) return fromFlags;
  let m;
  if ((m = /^use the smaller sibling (\S+)/.exec(action))) return { mode: "fit", model: m[1], set: {} };
  if ((m = /^halve the context to (\d+) tokens/.exec(action))) return { mode: "fit", set: { context: m[1] } };
  if (/^gradient checkpointing/.test(action)) return { mode: "train", set: { checkpointing: "full" } };
  if (/^8-bit AdamW/.test(action)) return { mode: "train", set: { optimizer: "adamw-8bit" } };
  if ((m = /^QLoRA .*rank (\d+)/.exec(action))) return { mode: "train", set: { method: "qlora", "lora-rank": m[1] } };
  if ((m = /^LoRA \(rank (\d+)\)/.exec(action))) return { mode: "train", set: { method: "lora", "lora-rank": m[1] } };
  if (/^KV cache in fp8/.test(action)) return { mode: "inference", set: { "kv-dtype": "fp8" } };
  if (task === "train") return null;
  if (/LLM\.int8/.test(action)) return { mode: "inference", set: { quant: "bnb-int8" } };
  if (/NF4 \(load_in_4bit/.test(action)) return { mode: "inference", set: { quant: "nf4-dq" } };
  if (/^GPTQ or AWQ/.test(action)) return { mode: "inference", set: { quant: "gptq" } };
  return null;
}

const chip = (verdict, text = verdict) => `<span class="chip ${verdictClass(verdict)}">${escapeHtml(text)}</span>`;

export function fitTables(result) {
  let html = "";
  const limits = result.limits || {};
  const runtime = result.runtime && result.runtime.per_gpu_bytes;
  const facts = [["weights", formatBytes(result.weight_bytes)], ...(runtime ? [["runtime per GPU", formatBytes(runtime)]] : []),
    ["total", formatBytes(result.total_bytes)], ["GPUs of this kind needed", result.gpus_needed ?? "no count is enough"]];
  if (limits.max_context_tokens !== undefined) facts.push(["longest context", formatTokens(limits.max_context_tokens)]);
  if (limits.max_batch !== undefined) facts.push(["largest batch", formatTokens(limits.max_batch)]);
  const speed = result.speed_upper_bounds;
  if (speed) {
    facts.push(["decode, upper bound", speed.decode_tokens_per_s ? `${speed.decode_tokens_per_s.toFixed(1)} tokens/s` : "unknown"]);
    facts.push(["prefill, upper bound", speed.prefill_tokens_per_s ? `${formatCount(Math.round(speed.prefill_tokens_per_s))} tokens/s` : "unknown"]);
  }
  html += `<div id="fit-facts">${tableHtml(["limit", "value"], facts, "Limits and speed bounds")}</div>`;
  // The advice comes before the placement: it is what to do; the map is what to paste.
  if (result.advice && result.advice.length) {
    html += `<div id="advice" class="stack">${tableHtml(["advice", "total", "saves", "verdict", "quality", "setting"], result.advice.map((a, i) => {
      const setting = adviceSetting(a.action, result.task, a.flags);
      return [{ html: `${escapeHtml(a.action)}<br><small>${escapeHtml(a.detail)}</small>` }, formatBytes(a.total_bytes), formatBytes(a.saved_bytes),
        { html: chip(a.verdict) }, `${a.quality_cost}: ${a.quality_note}`,
        { html: setting ? `<button type="button" class="apply" data-advice="${i}">apply</button>` : "" }];
    }), "Advice, ranked")}</div>`;
  }
  html += tableHtml(["device", "memory", "used", "modules"], result.devices.map((d) => [d.label,
    d.max_memory === "unlimited" ? "unlimited" : formatBytes(d.max_memory), formatBytes(d.used_bytes), d.modules.join(", ")]), "Devices");
  const map = Object.entries(result.device_map || {});
  const mapTable = tableHtml(["module", "device"], map.map(([k, v]) => [k === "" ? "(whole model)" : k, String(v)]), "device_map (for from_pretrained)");
  html += map.length > MAP_ROWS_SHOWN
    ? `<details id="device-map"><summary>device_map for from_pretrained: ${map.length} modules</summary>${mapTable}</details>`
    : `<div id="device-map">${mapTable}</div>`;
  return html;
}

// llama.cpp's --fit for a GGUF model (fit's answer without a schema: {fits, arguments, command,
// steps, estimate}, docs/estimates.md "GGUF / llama.cpp").
export const isLlamaCppFit = (result) => Boolean(result) && result.schema === undefined && typeof result.fits === "boolean" && Boolean(result.estimate);

export function llamaCppFitHtml(result) {
  let html = `<div id="llamacpp-fit"><p>${chip(result.fits ? "fits" : "does not fit", result.fits ? "fits" : "does not fit: the closest configuration")}` +
    ` The llama.cpp command: <code id="llamacpp-command">${escapeHtml(result.command)}</code></p>`;
  if (result.steps && result.steps.length) html += `<ul>${result.steps.map((s) => `<li>${escapeHtml(s)}</li>`).join("")}</ul>`;
  return html + `</div>${llamaCppTables(result.estimate)}`;
}

// memfit.deploy/1 (fit with --engine): one row per deployment.
export function deployTable(result) {
  return tableHtml(["GPU", "layout", "verdict", "per GPU", "KV pool", "longest context", "sequences", "decode tok/s"], result.rows.map((r) => [
    `${r.gpus} × ${r.gpu}`, r.layout, { html: chip(r.verdict) }, formatBytes(r.total_per_gpu_bytes), formatBytes(r.kv_pool_bytes),
    formatTokens(r.max_context_tokens), String(r.max_sequences), r.decode_tokens_per_s ? r.decode_tokens_per_s.toFixed(1) : "—"]), "Deployment");
}

// The "runs on" grid from fit --all-gpus: per GPU the counts 1/2/4/8, fitting first by the GPU
// memory they take (GPUs x memory; the catalog has no prices, so this is the stand-in for cost).
export function gridRows(result, catalog) {
  const vendors = new Map(catalog.map((g) => [g.name, g.vendor]));
  const byGpu = new Map();
  for (const r of result.rows) {
    if (!byGpu.has(r.gpu)) byGpu.set(r.gpu, { gpu: r.gpu, vendor: vendors.get(r.gpu) || "", memory: r.gpu_memory_bytes, counts: {} });
    byGpu.get(r.gpu).counts[r.gpus] = r;
  }
  const cost = (g) => { const n = [1, 2, 4, 8].find((k) => g.counts[k] && g.counts[k].fits); return n ? n * g.memory : Infinity; };
  return [...byGpu.values()].sort((a, b) => cost(a) - cost(b) || a.memory - b.memory || a.gpu.localeCompare(b.gpu));
}

export function gridHtml(rows, vendor, minGib) {
  const shown = rows.filter((g) => (!vendor || g.vendor === vendor) && g.memory >= minGib * 2 ** 30);
  return tableHtml(["GPU", "vendor", "memory", "×1", "×2", "×4", "×8"], shown.map((g) => [g.gpu, g.vendor, formatBytes(g.memory),
    ...[1, 2, 4, 8].map((n) => { const r = g.counts[n]; if (!r) return "—";
      const text = r.fits ? `fits · ${formatTokens(r.max_context_tokens)} ctx` : r.verdict;
      return { html: `<span class="chip ${verdictClass(r.verdict)}" title="${escapeHtml(r.refusal || r.layout)}">${escapeHtml(text)}</span>` }; })]),
    `Runs on (${shown.length} of ${rows.length} GPUs; those that fit first, by the least GPU memory they take: the catalog has no prices)`);
}
