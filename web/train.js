// Training mode: the stages the API reports (model loaded, forward, backward, optimizer step:
// allocated bytes, without CUDA context and reserve), each bar made of the parts the API says are
// alive then (stages[].parts, docs/json.md); they sum to the stage's total.
import { formatBytes, tableHtml, formatCount } from "./util.js";
import { label } from "./words.js";

// [{label, bytes: [per stage]}], parts in the order they first appear.
export function stageParts(result) {
  const parts = new Map();
  result.stages.forEach((s, j) => {
    for (const p of s.parts || []) {
      if (!parts.has(p.name)) parts.set(p.name, { label: p.name, bytes: result.stages.map(() => 0) });
      parts.get(p.name).bytes[j] += p.bytes;
    }
  });
  return [...parts.values()];
}

// The stage totals with their human labels, for the exports.
export function trainTable(result) {
  const raw = result.stages.map((s) => [s.stage + (s.stage === result.peak_stage ? " (peak)" : ""), s.bytes]);
  return { headers: ["stage", "allocated"], raw, rows: raw.map(([stage, bytes]) => [stage, formatBytes(bytes)]) };
}

export function trainTables(result) {
  const stageRows = result.stages.map((s) => [s.stage + (s.stage === result.peak_stage ? " (peak)" : ""), formatBytes(s.bytes)]);
  let html = tableHtml(["stage", "allocated"], stageRows, "Stage totals (the API's stages)");
  const rows = result.components.filter((c) => c.bytes !== 0).map((c) => [label(c.name), formatBytes(c.bytes)]);
  rows.push(["peak per GPU", formatBytes(result.total_bytes)]);
  html += tableHtml(["component", "size (not all alive at once)"], rows, "Components: the largest each reaches");
  html += tableHtml(["fact", "value"], [["trainable parameters", formatCount(result.trainable_params)],
    ["frozen parameters", formatCount(result.frozen_params)], ...(result.cpu_ram ? [["CPU RAM per process", formatBytes(result.cpu_ram)]] : [])]);
  return html;
}
