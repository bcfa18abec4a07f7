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

export function loadChart(result) {
  const labels = result.rows.map((r) => r.dtype);
  const gibOf = (b) => (b === null ? null : Number(b) / 2 ** 30);
  if (result.schema.startsWith("memfit.accelerate")) {
    return dtypeBars(labels, [{ label: "Total Size (GiB)", data: result.rows.map((r) => gibOf(r.total_size_bytes)) }], "Memory by dtype (accelerate)");
  }
  return dtypeBars(labels, [{ label: "Load (GiB)", data: result.rows.map((r) => gibOf(r.total_bytes)) },
    { label: "Training with AdamW (GiB)", data: result.rows.map((r) => gibOf(r.training_adam_bytes)) }], "Memory by dtype");
}
