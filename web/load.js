// Load mode: estimate-memory rows (memory by dtype), or accelerate's table with accelerate: true.
import { formatBytes } from "./util.js";
import { dtypeBars } from "./charts.js";

export function loadTable(result) {
  if (result.schema.startsWith("memfit.accelerate")) {
    return { headers: ["dtype", "Largest Layer", "Total Size", "Training using Adam"],
      rows: result.rows.map((r) => [r.dtype, r.strings.largest_layer, r.strings.total_size, r.strings.training_adam]),
      raw: result.rows.map((r) => [r.dtype, r.largest_layer_bytes, r.total_size_bytes, r.training_adam_bytes]) };
  }
  return { headers: ["dtype", "Load", "Largest block", "Training (AdamW)"],
    rows: result.rows.map((r) => [r.dtype, formatBytes(r.total_bytes), formatBytes(r.largest_block_bytes),
      r.training_adam_bytes === null ? "N/A" : formatBytes(r.training_adam_bytes)]),
    raw: result.rows.map((r) => [r.dtype, r.total_bytes, r.largest_block_bytes, r.training_adam_bytes]) };
}

// Why the training figure here is not the Train tab's: one line under the table.
export const LOAD_NOTE = {
  load: "Training (AdamW) here is weights, gradients and AdamW's states only; the Train tab adds activations, CUDA context and the allocator's reserve at its settings, so its peak is larger.",
  accelerate: "accelerate's table: its \"Training using Adam\" is 4 × the model at the dtype (no activations, no mixed-precision master copy), and its \"MB\"/\"GB\" are 1024-based; the Train tab counts every stage at its settings.",
};

// The chart is about loading: one bar per dtype (training stays in the table and the Train tab).
export function loadChart(result) {
  const labels = result.rows.map((r) => r.dtype);
  const gibOf = (b) => (b === null ? null : Number(b) / 2 ** 30);
  if (result.schema.startsWith("memfit.accelerate")) {
    return dtypeBars(labels, [{ label: "Total Size (GiB)", data: result.rows.map((r) => gibOf(r.total_size_bytes)) }], "Memory by dtype (accelerate)");
  }
  return dtypeBars(labels, [{ label: "Load (GiB)", data: result.rows.map((r) => gibOf(r.total_bytes)) }], "Memory to load, by dtype");
}
