// Training mode: the stages the API reports (model loaded, forward, backward, optimizer step:
// allocated bytes, without CUDA context and reserve), each bar made of the parts alive then.
// The API gives each stage's total but not its parts: the persistent parts (weights, master
// weights, optimizer states, communication, and gradients at the optimizer step) are the API's
// components; the rest of a stage is shown as one part named for what it holds, so every bar
// sums to the API's stage total exactly. What the API should add: each stage's own parts.
import { formatBytes, tableHtml } from "./util.js";

const REST = {
  "model loaded": "other",
  forward: "activations and logits",
  backward: "backward working set",
  "optimizer step": "optimizer temporaries",
};

export function stageParts(result) {
  const per = result.per_gpu;
  const persistent = ["weights", "master_weights", "optimizer_states", "communication"];
  // Gradients are kept between steps with gradient accumulation (zeroed to None otherwise: then
  // alive as a whole only at the optimizer step).
  const gradsKept = (result.settings.grad_accum || 1) > 1;
  const alive = (stage, name) => (stage === "model loaded" ? name === "weights"
    : persistent.includes(name) || (name === "gradients" && (gradsKept || stage === "optimizer step")));
  const names = [...persistent, "gradients"];
  const parts = names.map((name) => ({ label: name.replace(/_/g, " "), bytes: result.stages.map((s) => (alive(s.stage, name) ? per[name] || 0 : 0)) }));
  // One "rest" part per stage, named for what that stage holds beyond the persistent parts.
  const rests = new Map();
  result.stages.forEach((s, j) => {
    const known = parts.reduce((sum, p) => sum + p.bytes[j], 0);
    let label = REST[s.stage] || "other", bytes = s.bytes - known;
    if (known > s.bytes) {
      // The persistent parts do not fit under this total (a layout this split does not know):
      // show the stage as one part rather than a wrong split.
      for (const p of parts) p.bytes[j] = 0;
      label = "allocated (not split)"; bytes = s.bytes;
    }
    if (bytes <= 0) return;
    if (!rests.has(label)) rests.set(label, { label, bytes: result.stages.map(() => 0) });
    rests.get(label).bytes[j] = bytes;
  });
  return [...parts.filter((p) => p.bytes.some((b) => b > 0)), ...rests.values()];
}

export function trainTables(result) {
  const stageRows = result.stages.map((s) => [s.stage + (s.stage === result.peak_stage ? " (peak)" : ""), formatBytes(s.bytes)]);
  let html = tableHtml(["stage", "allocated"], stageRows, "Stage totals (the API's stages)");
  const rows = result.components.map((c) => [c.name.replace(/_/g, " "), formatBytes(c.bytes)]);
  rows.push(["peak per GPU", formatBytes(result.total_bytes)]);
  html += tableHtml(["component", "size (not all alive at once)"], rows, "Components: the largest each reaches");
  html += tableHtml(["fact", "value"], [["trainable parameters", result.trainable_params.toLocaleString("en-US")],
    ["frozen parameters", result.frozen_params.toLocaleString("en-US")], ["CPU RAM per process", formatBytes(result.cpu_ram)]]);
  return html;
}
