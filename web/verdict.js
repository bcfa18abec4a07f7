// The headline's verdict in words, read from the answer (never computed here): `verdict` as the
// API gives it (inference, train and fit given a GPU: docs/json.md), a serving deployment's row, or
// llama.cpp's `fits`. null when the answer carries none (no GPU chosen).
import { formatBytes } from "./util.js";

const STATUSES = ["fits with offload", "does not fit", "fits", "refused"];

// The status words of a verdict value: "fits", "fits with offload", "does not fit" or "refused".
function statusOf(v) {
  if (typeof v === "string") return STATUSES.find((s) => v.toLowerCase().startsWith(s)) || v;
  if (!v || typeof v !== "object") return "";
  for (const key of ["status", "verdict", "result", "kind"]) if (typeof v[key] === "string") return statusOf(v[key]);
  if (v.fits === true) return v.offload ? "fits with offload" : "fits";
  if (v.fits === false) return "does not fit";
  return "";
}

// The hardware a verdict is about: "1 × RTX 4090", from the verdict's own fields when it names them.
function hardwareOf(v, fallback) {
  if (v && typeof v === "object") {
    const gpu = v.gpu || v.gpu_name || (Array.isArray(v.gpus) ? v.gpus.join(", ") : null);
    const count = typeof v.gpus === "number" ? v.gpus : typeof v.gpu_count === "number" ? v.gpu_count : typeof v.count === "number" ? v.count : null;
    if (gpu) return count ? `${count} × ${gpu}` : gpu;
  }
  return fallback || "";
}

// {status, text} for the headline: `text` starts with the status in words ("Fits on 1 × RTX 4090",
// "Does not fit on RTX 4090: needs 2 GPUs of this kind"). `hardware` names the GPU asked for.
export function verdictOf(result, hardware = "") {
  if (!result) return null;
  // fit keeps its string `verdict` and gives the object as `verdict_detail` (docs/json.md, "verdict").
  let v = result.verdict_detail ?? result.verdict, extra = "";
  if (v === undefined && result.schema === undefined && typeof result.fits === "boolean") v = { fits: result.fits };  // llama.cpp fit
  if (v === undefined || v === null || v === "") return null;
  const status = statusOf(v);
  if (!status) return null;
  if (typeof v === "object") {
    // Not its `line`: that is the CLI's sentence, whose fixes are command-line flags.
    const why = v.reason || v.why;
    if (typeof why === "string" && why) extra = `: ${why}`;
    else if (typeof v.needed_bytes === "number" && typeof v.available_bytes === "number") extra = `: needs ${formatBytes(v.needed_bytes)} of ${formatBytes(v.available_bytes)}`;
  }
  const needed = typeof v === "object" && "gpus_needed" in v ? v.gpus_needed : result.gpus_needed;
  if (!extra && status === "does not fit" && needed !== undefined) extra = needed ? `: needs ${needed} GPUs of this kind` : ": no number of these GPUs is enough";
  const on = hardwareOf(v, hardware);
  return { status, text: `${capitalize(status)}${on ? ` on ${on}` : ""}${extra}` };
}

function capitalize(text) { return text.charAt(0).toUpperCase() + text.slice(1); }
