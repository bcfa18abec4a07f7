// The model box: the built-in catalog (GET api/v1/models, offline) as suggestions, the models
// used recently first (kept in this browser's localStorage, never sent anywhere).
import { $, escapeHtml, formatBytes } from "./util.js";

const KEY = "memfit.recent-models";
let catalog = [];

export function recentModels() {
  try { return JSON.parse(localStorage.getItem(KEY) || "[]").filter((m) => typeof m === "string"); } catch (_) { return []; }
}

export function rememberModel(model) {
  const list = [model, ...recentModels().filter((m) => m !== model)].slice(0, 8);
  try { localStorage.setItem(KEY, JSON.stringify(list)); } catch (_) { /* storage may be off */ }
  fillSuggestions();
}

export function fillSuggestions() {
  const recent = recentModels();
  const options = recent.map((m) => `<option value="${escapeHtml(m)}">recent</option>`);
  for (const m of catalog) {
    if (recent.includes(m.id)) continue;
    options.push(`<option value="${escapeHtml(m.id)}">${escapeHtml(`${m.description || m.family} · ${formatBytes(m.stored_bytes)}`)}</option>`);
  }
  $("#model-list").innerHTML = options.join("");
}

export function setCatalog(models) {
  catalog = Array.isArray(models) ? models : [];
  fillSuggestions();
}

export const isCatalogModel = (id) => catalog.some((m) => m.id === id);
