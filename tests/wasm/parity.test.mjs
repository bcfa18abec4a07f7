// The wasm engine (site/engine.mjs) against the native API: for every catalog model and every
// command (estimate-memory, inspect, inference, train, fit, models, gpus) the engine's answer in
// Node equals what `memfit serve` answers for the same body, byte for byte; the llama.cpp answers
// for a GGUF file made here equal `memfit <command> FILE --format json`, and a hostile file gets
// the CLI's one-line error. Both sides work offline (HF_HUB_OFFLINE=1), so catalog models answer
// from the catalog.
//   MEMFIT_BINARY=build/memfit MEMFIT_ENGINE_DIR=build-wasm node --test tests/wasm/
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { tinyLlamaGguf } from "../browser/gguf.mjs";
import { startMemfitServer } from "../browser/serve.mjs";

const binary = resolve(process.env.MEMFIT_BINARY || "build/memfit");
const engineDir = resolve(process.env.MEMFIT_ENGINE_DIR || "build-site/site");
const home = mkdtempSync(join(tmpdir(), "memfit-parity-"));
const env = { ...process.env, HF_HUB_OFFLINE: "1", HF_ENDPOINT: "http://127.0.0.1:9", HF_HOME: home,
  MEMFIT_CACHE: join(home, "memfit"), HF_HUB_CACHE: join(home, "hub") };
let engine, server, base;

before(async () => {
  assert.ok(existsSync(binary), `${binary} not built`);
  // engine.mjs imports memfit_engine.mjs from its own folder: the site, or the wasm build plus site/.
  const enginePath = existsSync(join(engineDir, "engine.mjs")) ? join(engineDir, "engine.mjs") : resolve("site/engine.mjs");
  const { createEngine } = await import(pathToFileURL(enginePath).href);
  engine = await createEngine({ offline: true, wasmBinary: readFileSync(join(engineDir, "memfit_engine.wasm")) });
  ({ child: server, base } = await startMemfitServer(binary, env));
});

after(() => { if (server) server.kill(); });

async function native(command, body) {
  const response = await fetch(`${base}api/v1/${command}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.text() };
}

function same(command, body, nativeAnswer, wasmAnswer) {
  const what = `${command} ${JSON.stringify(body)}`;
  assert.equal(wasmAnswer.status, nativeAnswer.status, `${what}: status (${wasmAnswer.body.slice(0, 200)})`);
  assert.equal(wasmAnswer.body, nativeAnswer.body, `${what}: body`);
}

test("catalog lists: models and gpus", async () => {
  for (const command of ["models", "gpus"]) {
    const n = await native(command, {});
    assert.equal(n.status, 200);
    same(command, {}, n, engine.run(command, {}));
  }
});

test("every catalog model, every command: the engine answers as the server does", async () => {
  const models = JSON.parse(engine.run("models", {}).body);
  assert.ok(models.length >= 100, `catalog of ${models.length} models`);
  const requests = (id) => [["estimate-memory", { model: id }], ["inspect", { model: id }],
    ["inference", { model: id, context: 4096, batch: 2 }], ["train", { model: id, method: "lora" }],
    ["fit", { model: id, gpu: ["h100"], task: "inference" }]];
  let compared = 0;
  let wasmMs = 0;
  for (const { id } of models) {
    for (const [command, body] of requests(id)) {
      const n = await native(command, body);
      const started = performance.now();
      const w = engine.run(command, body);
      wasmMs += performance.now() - started;
      same(command, body, n, w);
      compared++;
    }
  }
  console.log(`compared ${compared} answers for ${models.length} models; engine time ${wasmMs.toFixed(0)} ms`);
});

test("bad bodies get the server's errors", async () => {
  for (const [command, body] of [["inference", { model: "no-such-model-xyz" }], ["inference", { model: "openai-community/gpt2", context: "lots" }],
    ["nonsense", {}], ["fit", { model: "openai-community/gpt2", gpu: "not-a-gpu" }]]) {
    same(command, body, await native(command, body), engine.run(command, body));
  }
  assert.equal(engine.run("inference", "{not json").status, 400);
});

// The CLI's JSON for a local file (the server refuses local paths; the page's dropped files are
// the user's own, as on the command line).
function cli(args) {
  const r = spawnSync(binary, [...args, "--format", "json"], { env, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.trim() };
}

test("a GGUF file: llama.cpp answers equal the CLI's", () => {
  const { header, size } = tinyLlamaGguf();
  // The whole file (tensor data as zeros): the readers check that the data section holds it.
  const file = Buffer.alloc(size);
  header.copy(file);
  const path = join(home, "tiny.gguf");
  writeFileSync(path, file);
  const dir = engine.mountFiles([{ name: "tiny.gguf", data: new Uint8Array(file) }]);
  const local = `${dir}/tiny.gguf`;
  for (const [command, body, args] of [
    ["estimate-memory", {}, []], ["inspect", {}, []],
    ["inference", { context: 2048, gpu: ["24GiB"] }, ["--context", "2048", "--gpu", "24GiB"]],
    ["fit", { gpu: ["24GiB"], ram: "64GiB" }, ["--gpu", "24GiB", "--ram", "64GiB"]]]) {
    const c = cli([command, path, ...args]);
    const w = engine.run(command, { model: local, ...body }, { allowLocalPaths: true });
    assert.equal(c.status, 0, `${command}: ${c.stderr}`);
    assert.equal(w.status, 200, `${command}: ${w.body}`);
    assert.deepEqual(JSON.parse(w.body.split(local).join(path)), JSON.parse(c.stdout), command);
  }
});

test("a hostile file gets the CLI's one-line error, and the engine still answers", () => {
  const bad = Buffer.alloc(64);
  bad.writeUInt32LE(0x46554747, 0); bad.writeUInt32LE(3, 4);
  bad.writeBigUInt64LE(1n << 60n, 8);  // 2^60 tensors
  const path = join(home, "hostile.gguf");
  writeFileSync(path, bad);
  const dir = engine.mountFiles([{ name: "hostile.gguf", data: new Uint8Array(bad) }]);
  const c = cli(["estimate-memory", path]);
  const w = engine.run("estimate-memory", { model: `${dir}/hostile.gguf` }, { allowLocalPaths: true });
  assert.notEqual(c.status, 0);
  assert.notEqual(w.status, 200);
  const message = JSON.parse(w.body).error;
  assert.ok(!message.includes("\n"));
  assert.equal(message.split(`${dir}/hostile.gguf`).join(path), c.stderr.replace(/^memfit: (error: )?/, ""));
  // A huge safetensors header length: refused before allocating.
  const st = Buffer.alloc(16); st.writeBigUInt64LE(1n << 50n, 0);
  const stDir = engine.mountFiles([{ name: "model.safetensors", data: new Uint8Array(st) }]);
  const s = engine.run("estimate-memory", { model: `${stDir}/model.safetensors` }, { allowLocalPaths: true });
  assert.notEqual(s.status, 200);
  assert.match(JSON.parse(s.body).error, /header length/);
  assert.equal(engine.run("estimate-memory", { model: "openai-community/gpt2" }).status, 200);
});

test("local paths are refused unless allowed, as the server refuses them", () => {
  const r = engine.run("estimate-memory", { model: "/etc/passwd" });
  assert.equal(r.status, 400);
});
