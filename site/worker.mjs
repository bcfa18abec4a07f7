// The static site's engine thread: the wasm engine (engine.mjs) answering the page's messages
// (web/api.js), so a long Hub read or a large model never blocks the page. Messages:
//   {id, type: "run", command, body}        -> {status, body, errorKind}
//   {id, type: "batch", requests}           -> [{status, body}]
//   {id, type: "files", files: [File]}      -> {dir}: the files mounted read-only at dir
//   {id, type: "token", token}              -> null (the token is this worker's, never stored here)
// memfit's Hub cache lives in IndexedDB (IDBFS at /cache), loaded before the first answer and saved
// after each answer. The Hub is https://huggingface.co unless the page's URL says ?hub=<endpoint>
// (the tests' stand-in Hub).
import { createEngine } from "./engine.mjs";

const hub = new URL(self.location.href).searchParams.get("hub") || "";
const ready = (async () => {
  const engine = await createEngine({ endpoint: hub, cacheDir: "/cache/memfit" });
  const FS = engine.module.FS;
  try {
    FS.mkdirTree("/cache");
    FS.mount(FS.filesystems.IDBFS, {}, "/cache");
    await new Promise((resolve) => FS.syncfs(true, () => resolve()));  // a failed load: empty cache
  } catch (_) { /* no IndexedDB (private mode): the cache lives in memory */ }
  return engine;
})();

let saving = null;
function saveCache(engine) {
  if (saving) return;
  saving = setTimeout(() => {
    saving = null;
    try { engine.module.FS.syncfs(false, () => {}); } catch (_) { /* best effort */ }
  }, 500);
}

// Local files (mounted under /local/) are the user's own: the API may read them here, as the CLI
// may; the server never can.
function runOne(engine, command, body) {
  const model = body && typeof body.model === "string" ? body.model : "";
  return engine.run(command, body, { allowLocalPaths: model.startsWith("/local/") });
}

self.onmessage = async ({ data }) => {
  const { id, type } = data;
  try {
    const engine = await ready;
    let result = null;
    if (type === "run") {
      result = runOne(engine, data.command, data.body);
      saveCache(engine);
    } else if (type === "batch") {
      result = data.requests.map(({ command, body }) => {
        const { status, body: text } = runOne(engine, command, body);
        return { status, body: text };
      });
      saveCache(engine);
    } else if (type === "files") {
      result = { dir: engine.mountFiles(data.files) };
    } else if (type === "token") {
      engine.setToken(data.token || "");
    }
    self.postMessage({ id, result });
  } catch (error) {
    self.postMessage({ id, failed: String(error && error.message ? error.message : error) });
  }
};
