// The model box: the built-in catalog (GET api/v1/models, offline) as suggestions, the models
// used recently first (kept in this browser's localStorage, never sent anywhere), and models found
// by the Hub's search through the server (GET api/v1/hub/models?search=...), when it can reach it.
import { $, escapeHtml, formatBytes, formatCount } from "./util.js";

const KEY = "memfit.recent-models";
let catalog = [];
let hubFound = [];

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
  const shown = new Set([...recent, ...catalog.map((m) => m.id)]);
  for (const m of hubFound) {
    if (!shown.has(m.id)) options.push(`<option value="${escapeHtml(m.id)}">${escapeHtml(`Hub · ${formatCount(m.downloads)} downloads${m.pipeline_tag ? " · " + m.pipeline_tag : ""}`)}</option>`);
  }
  $("#model-list").innerHTML = options.join("");
}

export function setCatalog(models) {
  catalog = Array.isArray(models) ? models : [];
  fillSuggestions();
}

export const isCatalogModel = (id) => catalog.some((m) => m.id === id);

// Asks the server's Hub search for `text` (3+ characters, not already a catalog or recent name);
// a server without the Hub answers an error and the suggestions stay as they are.
let searchTimer = null, searchSeq = 0;
export function searchHub(text) {
  clearTimeout(searchTimer);
  text = text.trim();
  if (text.length < 3 || isCatalogModel(text) || recentModels().includes(text)) return;
  searchTimer = setTimeout(async () => {
    const seq = ++searchSeq;
    try {
      const response = await fetch(`api/v1/hub/models?search=${encodeURIComponent(text)}`);
      if (!response.ok || seq !== searchSeq) return;
      hubFound = (await response.json()).models || [];
      fillSuggestions();
    } catch (_) { /* no Hub: the catalog still answers */ }
  }, 300);
}
