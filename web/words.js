// The page's words: human labels for the API's keys (the JSON keeps its keys; tables and charts
// show these), and the API's error messages told in the page's terms: a web user has no command
// line, so "--gguf-file" or "use --offline" become the control that does it, or what the server does.
import { $$ } from "./util.js";

const LABELS = {
  weights: "Weights", kv_cache: "KV cache", activations: "Activations", cuda_context: "CUDA context",
  allocator_reserve: "Allocator reserve", cuda_graphs: "CUDA graphs", master_weights: "Master weights",
  gradients: "Gradients", optimizer_states: "Optimizer states", logits_and_loss: "Logits and loss",
  communication: "Communication buffers", transient: "Transient buffers", peak: "Peak",
};

// "kv_cache" -> "KV cache"; an unknown key loses its underscores and gains a capital.
export function label(key) {
  if (LABELS[key]) return LABELS[key];
  const text = String(key).replace(/_/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// Flags the page has no control for, said as what the page or the server does instead.
const HINTS = [
  [/\s*\(use --offline to work from the cache\)/g, " (the server could not reach the Hub: models in its cache and the built-in catalog still answer)"],
  [/\(--offline or HF_HUB_OFFLINE\)/g, "(the server works offline)"],
  [/pass --token or set HF_TOKEN/g, "the server needs a token (HF_TOKEN) of an account that accepted the terms"],
  [/choose one with --gguf-file \(a file, or a part of its name such as Q4_K_M\)/g, "choose one in “GGUF file” above"],
  [/read one with --gguf-file/g, "choose one in “GGUF file” above"],
  [/--gguf-file/g, "GGUF file"],
  [/MODEL\.gguf or GGUF file/g, "a GGUF model"],
];

// The text of the label of a control ("Context tokens"), without its value.
export function controlLabel(mode, name) {
  for (const scope of [mode, "hardware", "model"]) {
    const el = $$(`fieldset[data-for="${scope}"] [name="${name}"]`)[0];
    if (el && el.dataset.label) return el.dataset.label;
    const host = el && el.closest("label");
    if (!host) continue;
    const text = [...host.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join(" ").replace(/\s+/g, " ").trim();
    if (text) return text;
  }
  return null;
}

// The API's message for the page: CLI flags become the page's controls ("--context" -> "“Context
// tokens”"); a flag the page has none for is named as the setting, without the dashes.
export function pageError(message, mode) {
  let text = String(message || "");
  for (const [pattern, words] of HINTS) text = text.replace(pattern, words);
  return text.replace(/(^|[\s(:"'])--([a-z][a-z0-9-]*)/g, (_, before, flag) => {
    const shown = controlLabel(mode, flag);
    return `${before}“${shown || flag.replace(/-/g, " ")}”`;
  });
}

// The GGUF files an error offers (several GGUF models in a repository, or a choice that matched
// none or several): their names, projectors (mmproj) left out, or [] when it offers none. The API
// answers errors as text only ({"error": "..."}), so the list is read from the message's one
// format (hub/net/file_choice.cc, Describe: "a.gguf (2 files), b.gguf").
export function ggufChoices(message) {
  const m = /GGUF (?:models|files)[^:]*: (.+?)\)?$/.exec(String(message || ""));
  if (!m) return [];
  const names = m[1].match(/[^\s,()]+\.gguf/g) || [];
  return [...new Set(names)].filter((n) => !/mmproj/i.test(n));
}
