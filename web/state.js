// The page's whole state is the form: the model, the mode and every control of every mode. The URL
// hash holds it ("mode=fit&model=...&fit.gpu=RTX+4090"), so a copied link restores the page.
import { $, $$ } from "./util.js";

export const MODES = ["load", "inference", "train", "fit", "compare"];

export function currentMode() {
  const tab = $('.modes [aria-selected="true"]');
  return tab ? tab.dataset.mode : "load";
}

export function setMode(mode, focus = false) {
  if (!MODES.includes(mode)) mode = "load";
  for (const b of $$(".modes button")) {
    const on = b.dataset.mode === mode;
    b.setAttribute("aria-selected", String(on));
    b.tabIndex = on ? 0 : -1;
    if (on && focus) b.focus();
  }
  for (const f of $$('[role="tabpanel"] > fieldset[data-for]')) f.parentElement.hidden = f.dataset.for !== mode;
}

// Controls of a mode's fieldset with their URL keys.
function controls() {
  return $$("fieldset[data-for] input[name], fieldset[data-for] select[name]").map((el) => {
    const mode = el.closest("fieldset").dataset.for;
    return { el, key: `${mode}.${el.name}${el.type === "checkbox" && el.name === "dtypes" ? "." + el.value : ""}` };
  });
}

function readControl(el) {
  if (el.type === "checkbox") return el.checked ? "1" : "0";
  if (el.multiple) return Array.from(el.selectedOptions).map((o) => o.value).join(",");
  return el.value;
}

function writeControl(el, value) {
  if (el.type === "checkbox") el.checked = value === "1";
  else if (el.multiple) {
    const chosen = new Set(value.split(","));
    for (const o of el.options) o.selected = chosen.has(o.value);
  } else {
    // A choice filled in later (the GPU list, a repository's GGUF files) is kept until it is.
    if (el.tagName === "SELECT" && value && ![...el.options].some((o) => o.value === value)) el.add(new Option(value, value));
    el.value = value;
  }
}

// Keys of links made before the hardware was shared by every mode.
const OLD_KEYS = { "fit.gpu": "hardware.gpu", "compare.gpu": "hardware.gpu", "fit.ram": "hardware.ram" };

export function stateToHash() {
  const params = new URLSearchParams();
  params.set("mode", currentMode());
  params.set("model", $("#model").value.trim());
  for (const { el, key } of controls()) params.set(key, readControl(el));
  return params.toString();
}

export function saveToUrl() {
  history.replaceState(null, "", `#${stateToHash()}`);
  return location.href;
}

// Restores the form from the hash; false when the hash names no model.
export function restoreFromUrl(hash = location.hash) {
  const params = new URLSearchParams(hash.slice(1));
  if (!params.has("model")) return false;
  for (const [old, key] of Object.entries(OLD_KEYS)) if (params.has(old) && !params.has(key)) params.set(key, params.get(old));
  $("#model").value = params.get("model");
  setMode(params.get("mode") || "load");
  for (const { el, key } of controls()) if (params.has(key)) writeControl(el, params.get(key));
  return true;
}

// Sets one control of a mode ("train", "checkpointing", "full"); used by the advice's "apply".
export function setControl(mode, name, value) {
  const el = $(`fieldset[data-for="${mode}"] [name="${name}"]`);
  if (el) writeControl(el, String(value));
}

// The values of a mode's controls that go to the API, numbers as numbers; controls marked
// data-local (chart choices) stay in the page.
export function modeValues(mode) {
  const values = {};
  for (const el of $$(`fieldset[data-for="${mode}"] [name]`)) {
    if (el.hasAttribute("data-local") || el.type === "checkbox" || el.value === "") continue;
    values[el.name] = el.type === "number" ? Number(el.value) : el.value;
  }
  return values;
}

// The settings every mode shares: the GPU of the verdict, CPU RAM, a repository's GGUF file.
export function sharedValues() {
  return { ...modeValues("model"), ...modeValues("hardware") };
}

// Whether the URL hash sets a control ("fit", "task").
export function hashSets(mode, name, hash = location.hash) {
  return new URLSearchParams(hash.slice(1)).has(`${mode}.${name}`);
}

export function localValue(mode, name) {
  const el = $(`fieldset[data-for="${mode}"] [name="${name}"]`);
  return el ? readControl(el) : "";
}
