// Training mode: the stages the API reports (model loaded, forward, backward, optimizer step:
// allocated bytes, without CUDA context and reserve), each bar made of the parts the API says are
// alive then (stages[].parts, docs/json.md); they sum to the stage's total.
import { formatBytes, tableHtml, formatCount } from "./util.js";

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

export function trainTables(result) {
  const stageRows = result.stages.map((s) => [s.stage + (s.stage === result.peak_stage ? " (peak)" : ""), formatBytes(s.bytes)]);
  let html = tableHtml(["stage", "allocated"], stageRows, "Stage totals (the API's stages)");
  const rows = result.components.map((c) => [c.name.replace(/_/g, " "), formatBytes(c.bytes)]);
  rows.push(["peak per GPU", formatBytes(result.total_bytes)]);
  html += tableHtml(["component", "size (not all alive at once)"], rows, "Components: the largest each reaches");
  html += tableHtml(["fact", "value"], [["trainable parameters", formatCount(result.trainable_params)],
    ["frozen parameters", formatCount(result.frozen_params)], ["CPU RAM per process", formatBytes(result.cpu_ram)]]);
  return html;
}
