// The static site's controls (mounted by api.js on the static site only): a Hub token and local
// model files. Both live outside the page's form, so neither is ever part of the URL or a shared
// link. The token is kept in sessionStorage (this tab only) and handed to the engine's worker,
// which sends it to the Hub's host only. Files (a config.json, a folder, .safetensors or .gguf
// files) are read in place by the worker, only the header bytes (File.slice()); nothing is
// uploaded.
import { engineCall } from "./api.js";

const TOKEN_KEY = "memfit-hub-token";

// The model path the engine should read for what was dropped: a lone file itself, else the folder
// (a config.json with safetensors files), else the first shard of a split GGUF.
export function modelPathFor(dir, names) {
  const ggufs = names.filter((n) => n.endsWith(".gguf")).sort();
  if (names.length === 1) return `${dir}/${names[0]}`;
  if (ggufs.length && !names.includes("config.json")) return `${dir}/${ggufs[0]}`;
  return dir;
}

function setModel(path) {
  const input = document.getElementById("model");
  if (!input) return;
  input.value = path;
  input.dispatchEvent(new Event("input", { bubbles: true }));
  input.dispatchEvent(new Event("change", { bubbles: true }));
}

async function useFiles(fileList, status) {
  const files = [...fileList].filter((f) => /\.(gguf|safetensors|json)$/i.test(f.name));
  if (!files.length) {
    status.textContent = "no model files: drop a config.json, .safetensors or .gguf files, or a folder";
    return;
  }
  const { dir } = await engineCall({ type: "files", files });
  const path = modelPathFor(dir, files.map((f) => f.name));
  status.textContent = `reading ${files.length} local file${files.length > 1 ? "s" : ""} in this tab (nothing is uploaded)`;
  setModel(path);
}

export function mountStaticControls() {
  if (document.getElementById("static-controls")) return;
  const section = document.createElement("section");
  section.id = "static-controls";
  section.setAttribute("aria-label", "Hub token and local files");
  section.innerHTML = `
    <p>Runs in this tab: memfit compiled to WebAssembly. Hub models are read from the Hub with range requests; local files never leave this computer.</p>
    <label for="hub-token">Hub token (gated models; kept for this tab only, sent to the Hub only)</label>
    <input id="hub-token" type="password" autocomplete="off" spellcheck="false">
    <label for="local-files">Local model files (config.json, .safetensors, .gguf)</label>
    <input id="local-files" type="file" multiple accept=".json,.safetensors,.gguf">
    <label for="local-folder">A model folder</label>
    <input id="local-folder" type="file" webkitdirectory>
    <p id="static-status" role="status"></p>`;
  const form = document.getElementById("form");
  if (form) form.after(section); else document.body.append(section);
  const status = section.querySelector("#static-status");
  const token = section.querySelector("#hub-token");
  token.value = sessionStorage.getItem(TOKEN_KEY) || "";
  if (token.value) engineCall({ type: "token", token: token.value });
  token.addEventListener("change", () => {
    if (token.value) sessionStorage.setItem(TOKEN_KEY, token.value); else sessionStorage.removeItem(TOKEN_KEY);
    engineCall({ type: "token", token: token.value });
  });
  const onPick = (event) => useFiles(event.target.files, status).catch((e) => { status.textContent = e.message; });
  section.querySelector("#local-files").addEventListener("change", onPick);
  section.querySelector("#local-folder").addEventListener("change", onPick);
  document.addEventListener("dragover", (event) => event.preventDefault());
  document.addEventListener("drop", (event) => {
    event.preventDefault();
    if (event.dataTransfer && event.dataTransfer.files.length) {
      useFiles(event.dataTransfer.files, status).catch((e) => { status.textContent = e.message; });
    }
  });
}
