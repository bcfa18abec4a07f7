// Compare mode: up to four models side by side at one inference setting, or, for one model, its
// quantizations. Every cell is one API answer (estimate-memory, inference, train, fit), all asked
// for in one batch; an answer that is an error (a GGUF model has no training estimate) is a "—"
// in its cell with the reason in a note, never the end of the table. GGUF models answer in
// llama.cpp's shape (per device, no schema: docs/estimates.md), read here as they are.
import { apiBatch, answerOf } from "./api.js";
import { formatBytes, formatTokens, tableHtml, escapeHtml, verdictClass, formatCount } from "./util.js";
import { dtypeBars } from "./charts.js";
import { verdictOf } from "./verdict.js";

export const QUANTS = ["stored", "none", "bnb-int8", "nf4-dq", "gptq", "awq", "fp8", "int4"];

// The four answers of one model's column; the same settings as the Inference, Train and Fit tabs
// (the shared GPU and CPU RAM; the API's default context when none is typed).
function columnRequests(model, s, ggufFile) {
  const m = ggufFile ? { model, "gguf-file": ggufFile } : { model };
  const gpu = s.gpu ? { gpu: s.gpu } : {};
  return [
    { command: "estimate-memory", body: { ...m, dtypes: ["bfloat16"] } },
    { command: "inference", body: { ...m, context: s.context, batch: s.batch, ...gpu } },
    { command: "train", body: { ...m, ...gpu } },
    { command: "fit", body: { ...m, ...gpu, ...(s.ram ? { ram: s.ram } : {}), task: "inference", context: s.context, batch: s.batch, "no-advice": true } }];
}

function settle(item) { try { return answerOf(item); } catch (e) { return { error: e.message }; } }

// An inference answer's memory: per GPU, or llama.cpp's largest GPU (the host when on the CPU only).
function inferenceBytes(r) {
  if (r.total_bytes !== undefined) return r.total_bytes;
  if (!r.devices) return undefined;
  const gpus = r.devices.filter((d) => !d.host);
  return Math.max(0, ...(gpus.length ? gpus : r.devices).map((d) => d.total_bytes));
}
const contextOf = (r) => (r.settings ? r.settings.context : r.n_ctx);
const fitVerdict = (fit) => (fit.error ? null : verdictOf(fit));

// s: {models, context, batch, gpu, ram, ggufFile}. Returns {verdict, table (for exports), html, chart, result}.
export async function compare(s) {
  if (s.models.length === 1) return compareQuants(s.models[0], s);
  const answers = await apiBatch(s.models.flatMap((m, i) => columnRequests(m, s, i === 0 ? s.ggufFile : "")));
  const columns = s.models.map((model, i) => {
    const [load, inference, train, fit] = answers.slice(4 * i, 4 * i + 4).map(settle);
    return { model, load, inference, train, fit };
  });
  const errors = [];
  // A cell of one answer: its value, or "—" with a numbered note giving the API's reason.
  const cell = (answer, value) => {
    if (answer.error) {
      let n = errors.indexOf(answer.error);
      if (n < 0) n = errors.push(answer.error) - 1;
      return { text: `— (${n + 1})`, raw: "" };
    }
    const v = value(answer);
    return v === undefined || v === null ? { text: "—", raw: "" } : v;
  };
  const bytes = (answer, get) => cell(answer, (a) => { const b = get(a); return b === undefined ? undefined : { text: formatBytes(b), raw: b }; });
  const on = s.gpu ? `on one ${s.gpu}` : "on the GPU";
  const batch = s.batch || 1;
  const rows = [
    ["parameters", (c) => cell(c.load, (a) => ({ text: formatCount(a.parameters), raw: a.parameters }))],
    ["stored", (c) => bytes(c.load, (a) => a.stored_bytes)],
    ["load at bfloat16", (c) => bytes(c.load, (a) => a.rows && a.rows[0] && a.rows[0].total_bytes)],
    ["context (tokens)", (c) => cell(c.inference, (a) => ({ text: formatTokens(contextOf(a)), raw: contextOf(a) }))],
    [`inference per GPU (× ${batch} sequence${batch === 1 ? "" : "s"})`, (c) => bytes(c.inference, inferenceBytes)],
    ["KV cache per token", (c) => bytes(c.inference, (a) => a.kv_bytes_per_token)],
    ["full training peak (AdamW, bf16-mixed)", (c) => bytes(c.train, (a) => a.total_bytes)],
    [`serving ${on}`, (c) => cell(c.fit, (a) => { const v = verdictOf(a); return v && { html: `<span class="chip ${verdictClass(v.status)}">${escapeHtml(v.status)}</span>`, text: v.status, raw: v.status }; })],
    ["longest context there", (c) => cell(c.fit, (a) => (a.limits && a.limits.max_context_tokens !== undefined ? { text: formatTokens(a.limits.max_context_tokens), raw: a.limits.max_context_tokens } : undefined))],
  ];
  const grid = rows.map(([label, get]) => [label, ...columns.map(get)]);
  const headers = ["quantity", ...columns.map((c) => c.model)];
  const show = (v) => (typeof v === "string" ? v : v.html ? { html: v.html } : v.text);
  let html = tableHtml(headers, grid.map(([label, ...cells]) => [label, ...cells.map(show)]), "Models side by side");
  if (errors.length) html += `<ol class="hint" id="compare-errors">${errors.map((e) => `<li>${escapeHtml(e)}</li>`).join("")}</ol>`;
  const verdicts = columns.map((c) => ({ model: c.model, v: fitVerdict(c.fit) })).filter((x) => x.v);
  const verdict = verdicts.length && s.gpu ? { status: verdicts[0].v.status, text: `Serving on one ${s.gpu}: ${verdicts.map((x) => `${x.model} ${x.v.status}`).join(" · ")}` } : null;
  const served = columns.map((c) => (c.inference.error ? null : inferenceBytes(c.inference)));
  const trained = columns.map((c) => (c.train.error ? null : c.train.total_bytes));
  return {
    verdict, html,
    table: { headers, rows: grid.map(([label, ...cells]) => [label, ...cells.map((v) => v.text)]), raw: grid.map(([label, ...cells]) => [label, ...cells.map((v) => v.raw)]) },
    result: { schema: "memfit.page-compare/1", model: columns.map((c) => c.model).join(" vs "), columns: columns.map((c) => ({ model: c.model, inference: c.inference, train: c.train, fit: c.fit })) },
    chart: dtypeBars(columns.map((c) => c.model), [{ label: "inference per GPU (GiB)", data: served.map(gibOrNull) },
      { label: "full training peak (GiB)", data: trained.map(gibOrNull) }], "Models side by side", { log: spansDecades([...served, ...trained]) }),
  };
}

const gibOrNull = (b) => (b === null || b === undefined ? null : b / 2 ** 30);

// Values more than 30 times apart read on a log axis (DeepSeek-V3's terabytes beside a 1B model).
export function spansDecades(values) {
  const v = values.filter((x) => typeof x === "number" && x > 0);
  return v.length > 1 && Math.max(...v) / Math.min(...v) >= 30;
}

async function compareQuants(model, s) {
  const m = s.ggufFile ? { model, "gguf-file": s.ggufFile } : { model };
  const gpu = s.gpu ? { gpu: s.gpu } : {};
  const batch = await apiBatch(QUANTS.map((quant) => ({ command: "inference", body: { ...m, context: s.context, batch: s.batch, quant, ...gpu } })));
  const answers = batch.map((item, i) => ({ quant: QUANTS[i], ...(() => { const r = settle(item); return r.error ? { error: r.error } : { r }; })() }));
  const gguf = answers.some((a) => a.r && a.r.devices);
  const ok = answers.filter((a) => a.r);
  const weightsOf = (r) => (r.per_gpu ? r.per_gpu.weights : undefined);
  const rows = answers.map((a) => (a.r ? [a.quant, weightsOf(a.r) === undefined ? "—" : formatBytes(weightsOf(a.r)), formatBytes(inferenceBytes(a.r))] : [a.quant, "—", a.error]));
  const context = ok.length ? contextOf(ok[0].r) : s.context;
  const totalHeader = `total per GPU (${context ? formatTokens(context) : "default"} tokens × ${s.batch || 1})`;
  let html = tableHtml(["quantization", "weights per GPU", totalHeader], rows, `Quantizations of ${model}`);
  if (gguf) html += '<p class="hint">A GGUF file is stored in one quantization: llama.cpp runs it as it is. Choose another of the repository\'s GGUF files to compare.</p>';
  const totals = ok.map((a) => inferenceBytes(a.r));
  return {
    verdict: null, html,
    table: { headers: ["quantization", "weights per GPU", totalHeader], rows: ok.map((a) => [a.quant, weightsOf(a.r) === undefined ? "—" : formatBytes(weightsOf(a.r)), formatBytes(inferenceBytes(a.r))]),
      raw: ok.map((a) => [a.quant, weightsOf(a.r) ?? "", inferenceBytes(a.r)]) },
    result: { schema: "memfit.page-quantizations/1", model, rows: ok.map((a) => ({ quant: a.quant, inference: a.r })) },
    chart: dtypeBars(ok.map((a) => a.quant), [{ label: "weights per GPU (GiB)", data: ok.map((a) => gibOrNull(weightsOf(a.r))) },
      { label: "total per GPU (GiB)", data: totals.map(gibOrNull) }], `Quantizations of ${model}`, { log: spansDecades(totals) }),
  };
}
