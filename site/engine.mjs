// memfit's engine in WebAssembly: the API's answers without a server.
//
//   import { createEngine } from './engine.mjs';
//   const engine = await createEngine();
//   const { status, body } = engine.run('inference', { model: 'Qwen/Qwen3-8B', context: 32768 });
//
// run(command, body) answers exactly what `POST /api/v1/<command>` answers for the same body
// (body: an object or its JSON text): `status` is the HTTP status the server would give, `body`
// the response's JSON text, `errorKind` "" or the error's kind. It is RunApi (src/api/) compiled to
// wasm; nothing is computed here. The Hub is read with the browser's XMLHttpRequest (Range
// requests, inside a Web Worker: see site/worker.mjs); in Node every Hub request is unreachable.
//
// options:
//   wasmUrl / wasmBinary   where the .wasm is (default: beside this file) or its bytes
//   endpoint               the Hub (HF_ENDPOINT; default https://huggingface.co)
//   offline                true: never reach the Hub (HF_HUB_OFFLINE)
//   token                  a Hub token (HF_TOKEN): sent to the endpoint's host only
//   cacheDir               where memfit's Hub cache lives in the engine's file system
//   deadlineSeconds        the most network time one lookup takes (MEMFIT_HUB_DEADLINE; 10)
//   onRequest(url)         called for each Hub request (tests, progress)
import createMemfitModule from './memfit_engine.mjs';

export async function createEngine(options = {}) {
  const moduleOptions = {
    print: () => {},
    printErr: (line) => { if (options.printErr) options.printErr(line); },
    noInitialRun: true,
  };
  if (options.wasmBinary) moduleOptions.wasmBinary = options.wasmBinary;
  const inNode = typeof process === "object" && process.versions && process.versions.node && typeof window === "undefined" && typeof self === "undefined";
  if (inNode) {
    // Emscripten 3.1.6's ES module reads require and __dirname in Node: give it both, and the
    // .wasm's bytes (its own loader opens a file: URL as a path).
    const { createRequire } = await import("node:module");
    const { fileURLToPath } = await import("node:url");
    globalThis.require ??= createRequire(import.meta.url);
    globalThis.__dirname ??= fileURLToPath(new URL(".", import.meta.url));
    if (!moduleOptions.wasmBinary) {
      const { readFileSync } = await import("node:fs");
      moduleOptions.wasmBinary = readFileSync(options.wasmUrl || new URL("memfit_engine.wasm", import.meta.url));
    }
  }
  if (options.wasmUrl) moduleOptions.locateFile = (path) => (path.endsWith('.wasm') ? options.wasmUrl : path);
  const module = await createMemfitModule(moduleOptions);
  if (options.onRequest) module.memfitOnRequest = options.onRequest;
  const runRaw = module.cwrap('memfit_run', 'number', ['string', 'string', 'number']);
  const lastStatus = module.cwrap('memfit_last_status', 'number', []);
  const lastErrorKind = module.cwrap('memfit_last_error_kind', 'string', []);
  const setEnv = module.cwrap('memfit_set_env', null, ['string', 'string']);

  const env = {
    HOME: '/home/web_user',
    MEMFIT_CACHE: options.cacheDir || '/cache/memfit',
    HF_HUB_CACHE: '/home/web_user/no-hf-cache',  // the browser has no Hugging Face cache
    // One request at a time: the engine has no threads (a synchronous request blocks the worker).
    MEMFIT_HUB_CONCURRENCY: '1',
    MEMFIT_HUB_DEADLINE: String(options.deadlineSeconds ?? 10),
    HF_ENDPOINT: options.endpoint || '',
    HF_HUB_OFFLINE: options.offline ? '1' : '',
    HF_TOKEN: options.token || '',
  };
  for (const [name, value] of Object.entries(env)) setEnv(name, value);

  let mounts = 0;
  const engine = {
    module,
    // Answers one request (see above). `allowLocalPaths`: the body's "model" may name a file this
    // engine mounted (mountFiles), as the CLI may; the server never allows it.
    run(command, body, { allowLocalPaths = false } = {}) {
      const text = typeof body === 'string' ? body : JSON.stringify(body ?? {});
      const pointer = runRaw(String(command), text, allowLocalPaths ? 1 : 0);
      return { status: lastStatus(), body: module.UTF8ToString(pointer), errorKind: lastErrorKind() };
    },
    // Sets or clears (null, '') the token, the endpoint or offline mode for later requests.
    setToken(token) { setEnv('HF_TOKEN', token || ''); },
    setEndpoint(endpoint) { setEnv('HF_ENDPOINT', endpoint || ''); },
    setOffline(offline) { setEnv('HF_HUB_OFFLINE', offline ? '1' : ''); },
    // Files the user dropped or picked, read in place (only the bytes the readers ask for, with
    // File.slice(); nothing is copied or uploaded). In a worker they are mounted (WORKERFS);
    // elsewhere ({name, data: Uint8Array}) written to memory. Returns the directory holding them,
    // which is the model path for a folder (config.json, *.safetensors) or `dir/name` for a file.
    mountFiles(files) {
      const dir = `/local/${++mounts}`;
      module.FS.mkdirTree(dir);
      const blobs = files.filter((f) => typeof Blob !== 'undefined' && f instanceof Blob);
      if (blobs.length && module.FS.filesystems.WORKERFS && typeof FileReaderSync !== 'undefined') {
        module.FS.mount(module.FS.filesystems.WORKERFS, { files: blobs }, dir);
      } else {
        for (const f of files) module.FS.writeFile(`${dir}/${f.name}`, f.data);
      }
      return dir;
    },
  };
  return engine;
}
