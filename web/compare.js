// Compare mode: up to four models side by side at one inference setting, or, for one model, its
// quantizations. Every cell is one API answer (estimate-memory, inference, train, fit), all asked
// for in one batch.
import { apiBatch, answerOf } from "./api.js";
import { formatBytes, formatTokens, tableHtml, escapeHtml, verdictClass, formatCount } from "./util.js";
import { dtypeBars } from "./charts.js";

export const QUANTS = ["stored", "none", "bnb-int8", "nf4-dq", "gptq", "awq", "fp8", "int4"];

// The four answers of one model's column.
function columnRequests(model, s) {
  return [
    { command: "estimate-memory", body: { model, dtypes: ["bfloat16"] } },
    { command: "inference", body: { model, context: s.context, batch: s.batch } },
    { command: "train", body: { model } },
    { command: "fit", body: { model, gpu: s.gpu, task: "inference", context: s.context, batch: s.batch, "no-advice": true } }];
}

// s: {models, context, batch, gpu}. Returns {kind, columns | rows, table (for exports), html, chart}.
export async function compare(s) {
  if (s.models.length === 1) return compareQuants(s.models[0], s);
  const answers = await apiBatch(s.models.flatMap((m) => columnRequests(m, s)));
  const columns = s.models.map((model, i) => {
    const [load, inference, train, fit] = answers.slice(4 * i, 4 * i + 4).map(answerOf);
    return { model, load, inference, train, fit };
  });
  const rows = [
    ["parameters", (c) => formatCount(c.load.parameters), (c) => c.load.parameters],
    ["stored", (c) => formatBytes(c.load.stored_bytes), (c) => c.load.stored_bytes],
    ["load at bfloat16", (c) => formatBytes(c.load.rows[0].total_bytes), (c) => c.load.rows[0].total_bytes],
    [`inference per GPU (${formatTokens(s.context)} tokens × ${s.batch})`, (c) => formatBytes(c.inference.total_bytes), (c) => c.inference.total_bytes],
    ["KV cache per token", (c) => formatBytes(c.inference.kv_bytes_per_token), (c) => c.inference.kv_bytes_per_token],
    ["full training peak (AdamW, bf16-mixed)", (c) => formatBytes(c.train.total_bytes), (c) => c.train.total_bytes],
    [`on one ${s.gpu}`, (c) => ({ html: `<span class="chip ${verdictClass(c.fit.verdict)}">${escapeHtml(c.fit.verdict)}</span>` }), (c) => c.fit.verdict],
    ["longest context there", (c) => (c.fit.limits && c.fit.limits.max_context_tokens !== undefined ? formatTokens(c.fit.limits.max_context_tokens) : "—"), (c) => c.fit.limits?.max_context_tokens ?? ""],
  ];
  const headers = ["quantity", ...columns.map((c) => c.model)];
  return {
    html: tableHtml(headers, rows.map(([label, cell]) => [label, ...columns.map(cell)]), "Models side by side"),
    table: { headers: ["quantity", ...columns.map((c) => c.model)], rows: rows.map(([label, , raw]) => [label, ...columns.map((c) => String(raw(c)))]),
      raw: rows.map(([label, , raw]) => [label, ...columns.map(raw)]) },
    result: { schema: "memfit.page-compare/1", model: columns.map((c) => c.model).join(" vs "), columns: columns.map((c) => ({ model: c.model, inference: c.inference, train: c.train, fit: c.fit })) },
    chart: dtypeBars(columns.map((c) => c.model), [{ label: "inference per GPU (GiB)", data: columns.map((c) => c.inference.total_bytes / 2 ** 30) },
      { label: "full training peak (GiB)", data: columns.map((c) => c.train.total_bytes / 2 ** 30) }], "Models side by side"),
  };
}

async function compareQuants(model, s) {
  const batch = await apiBatch(QUANTS.map((quant) => ({ command: "inference", body: { model, context: s.context, batch: s.batch, quant } })));
  const answers = batch.map((item, i) => { try { return { quant: QUANTS[i], r: answerOf(item) }; } catch (e) { return { quant: QUANTS[i], error: e.message }; } });
  const ok = answers.filter((a) => a.r);
  const rows = answers.map((a) => (a.r ? [a.quant, formatBytes(a.r.per_gpu.weights), formatBytes(a.r.total_bytes)] : [a.quant, "—", a.error]));
  return {
    html: tableHtml(["quantization", "weights per GPU", `total per GPU (${formatTokens(s.context)} tokens × ${s.batch})`], rows, `Quantizations of ${model}`),
    table: { headers: ["quant", "weights_bytes", "total_bytes"], rows: ok.map((a) => [a.quant, String(a.r.per_gpu.weights), String(a.r.total_bytes)]),
      raw: ok.map((a) => [a.quant, a.r.per_gpu.weights, a.r.total_bytes]) },
    result: { schema: "memfit.page-quantizations/1", model, rows: ok.map((a) => ({ quant: a.quant, inference: a.r })) },
    chart: dtypeBars(ok.map((a) => a.quant), [{ label: "weights per GPU (GiB)", data: ok.map((a) => a.r.per_gpu.weights / 2 ** 30) },
      { label: "total per GPU (GiB)", data: ok.map((a) => a.r.total_bytes / 2 ** 30) }], `Quantizations of ${model}`),
  };
}
