// The only code that asks for answers: the JSON API under api/v1/ (docs/openapi.json) when the
// page is served by `memfit serve`, or, on the static site (scripts/build-site.sh puts
// <meta name="memfit-engine" content="worker.mjs"> in index.html), the same API compiled to
// WebAssembly and run in a Web Worker (site/worker.mjs, site/engine.mjs), so the page never
// blocks and nothing is asked of any server. Both give the same JSON for the same body.
import { mountStaticControls } from "./static_controls.js";

const engineMeta = typeof document !== "undefined" ? document.querySelector('meta[name="memfit-engine"]') : null;
export const staticSite = Boolean(engineMeta);

let worker = null;
let nextId = 0;
const pending = new Map();

// The engine's worker, started on first use; answers come back by id.
function engineWorker() {
  if (!worker) {
    // The page's query (?hub=ENDPOINT: the tests' stand-in Hub) goes to the worker.
    worker = new Worker(new URL(engineMeta.content + location.search, document.baseURI), { type: "module" });
    worker.onmessage = ({ data }) => {
      const entry = pending.get(data.id);
      if (!entry) return;
      pending.delete(data.id);
      if (data.failed) entry.reject(new Error(data.failed)); else entry.resolve(data.result);
    };
    worker.onerror = (event) => {
      for (const entry of pending.values()) entry.reject(new Error(event.message || "the engine failed to start"));
      pending.clear();
    };
  }
  return worker;
}

// Sends one message to the engine's worker: {type: "run" | "batch" | "files" | "token", ...}.
export function engineCall(message, transfer = []) {
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    engineWorker().postMessage({ ...message, id }, transfer);
  });
}

function answerFromText(status, text) {
  const json = JSON.parse(text);
  if (status !== 200) throw new Error(json.error || `HTTP ${status}`);
  return json;
}

export async function api(command, body) {
  if (staticSite) {
    const { status, body: text } = await engineCall({ type: "run", command, body });
    return answerFromText(status, text);
  }
  const response = await fetch(`api/v1/${command}`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(json.error || `HTTP ${response.status}`);
  return json;
}

// GET api/v1/<command> (the catalogs: gpus, models): the same answer as a POST with no options.
export async function apiGet(command) {
  if (staticSite) return api(command, {});
  const response = await fetch(`api/v1/${command}`);
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return response.json();
}

// Several answers in one round trip (POST api/v1/batch): [{command, body}] -> [{status, body}], in
// order; each answer is what POST api/v1/<command> gives.
export async function apiBatch(requests) {
  if (staticSite) {
    const results = await engineCall({ type: "batch", requests });
    return results.map(({ status, body }) => ({ status, body: JSON.parse(body) }));
  }
  const result = await api("batch", { requests });
  return result.results;
}

// An answer of a batch, or its error thrown as api() throws it.
export function answerOf(item) {
  if (item.status !== 200) throw new Error((item.body && item.body.error) || `HTTP ${item.status}`);
  return item.body;
}

// The static site's own controls (Hub token, local files), outside the form: never in the URL.
if (staticSite) {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountStaticControls);
  else mountStaticControls();
}
