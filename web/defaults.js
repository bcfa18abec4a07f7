// One default per quantity, the CLI's. A context left empty is not sent, so the API applies its
// own default (the model's maximum capped at 8,192 tokens for serving, 2,048 for training: the
// same words as `memfit inference` and `memfit train`); the box shows it as a placeholder. The
// other controls take their first value from here, or from the server's option table
// (POST api/v1/options: {"commands": {"fit": [{"name", "default", ...}]}}) when it answers one.
import { api } from "./api.js";
import { $$, formatTokens } from "./util.js";

// The CLI's defaults (include/memfit/requests.h) until the option table answers.
export const DEFAULTS = {
  serveContext: 8192,   // memfit/context_default.h, kServe: the model's maximum, capped
  trainContext: 2048,   // kTrain
  gpu: "RTX 4090",      // the page's own: the GPU of the first verdict
  controls: { fit: { task: "load", batch: 1 }, inference: { batch: 1 }, train: { batch: 1 }, compare: { batch: 1 }, hardware: { ram: "" } },
};

// The page's modes and the API command whose option table gives their controls' defaults.
const COMMAND_OF = { load: "estimate-memory", inference: "inference", train: "train", fit: "fit", compare: "inference" };

function contextPlaceholder(kind, task) {
  const serve = `default: the model's maximum, at most ${formatTokens(DEFAULTS.serveContext)}`;
  const train = `default: ${formatTokens(DEFAULTS.trainContext)}`;
  if (kind === "train" || (kind === "task" && task === "train")) return train;
  if (kind === "task" && task === "load") return "not used to load";
  return serve;
}

// Puts the placeholders on the context boxes (Fit's follows its task).
export function showContextDefaults() {
  const task = ($$('fieldset[data-for="fit"] [name="task"]')[0] || {}).value;
  for (const el of $$("[data-default-context]")) el.placeholder = contextPlaceholder(el.dataset.defaultContext, task);
}

function control(mode, name) { return $$(`fieldset[data-for="${mode}"] [name="${name}"]`)[0]; }

function setValue(el, value) {
  if (el.tagName === "SELECT" && ![...el.options].some((o) => o.value === String(value))) return false;
  el.value = String(value);
  return true;
}

// Gives every control named in `defaults` its default value (before the URL is read).
export function applyDefaults(defaults = DEFAULTS.controls) {
  for (const [mode, values] of Object.entries(defaults)) {
    for (const [name, value] of Object.entries(values)) {
      const el = control(mode, name);
      if (el && el.type !== "checkbox") setValue(el, value);
    }
  }
  showContextDefaults();
}

// The option table's defaults for the page's controls: {mode: {name: value}}. A context default
// (0: the model's own) stays a placeholder; a quantity with no default leaves the control alone.
export function defaultsFromOptions(table) {
  const out = {};
  const commands = (table && table.commands) || {};
  for (const [mode, command] of Object.entries(COMMAND_OF)) {
    for (const option of commands[command] || []) {
      // 0 and "" mean "derived" (tp from the GPUs, the model's own context): the control stays as it is.
      if (!option || option.name === "context" || [undefined, null, 0, ""].includes(option.default) || typeof option.default === "object") continue;
      const el = control(mode, option.name);
      if (!el || el.hasAttribute("data-local") || el.type === "checkbox") continue;
      (out[mode] = out[mode] || {})[option.name] = option.default;
    }
  }
  const fitRam = (commands.fit || []).find((o) => o && o.name === "ram");
  if (fitRam && typeof fitRam.default === "string") out.hardware = { ram: fitRam.default };
  return out;
}

// Asks the server for its option table; resolves to {mode: {name: value}} or null (an older
// server without POST api/v1/options keeps the page's copy above).
export async function optionDefaults() {
  try { return defaultsFromOptions(await api("options", {})); } catch (_) { return null; }
}
