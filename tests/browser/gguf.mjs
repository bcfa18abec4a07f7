// A tiny GGUF v3 file (a Llama of 2 layers, hidden 256, F16 weights) for the browser tests' fake
// Hub: the header as llama.cpp writes it (docs/formats.md, "GGUF"), the tensor data as zeros.
const F32 = 0, F16 = 1;
const BYTES = { [F32]: 4, [F16]: 2 };

class Writer {
  constructor() { this.parts = []; }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.parts.push(b); return this; }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.parts.push(b); return this; }
  str(s) { const b = Buffer.from(s, "utf8"); this.u64(b.length); this.parts.push(b); return this; }
  bytes() { return Buffer.concat(this.parts); }
}

// {header: Buffer (magic .. tensor infos, padded to the alignment), size: the whole file's bytes}.
export function tinyLlamaGguf({ layers = 2, embd = 256, heads = 4, ff = 512, vocab = 1000, ctx = 4096 } = {}) {
  const kv = [["general.architecture", "str", "llama"], ["llama.block_count", "u32", layers],
    ["llama.context_length", "u32", ctx], ["llama.embedding_length", "u32", embd],
    ["llama.feed_forward_length", "u32", ff], ["llama.attention.head_count", "u32", heads],
    ["llama.attention.head_count_kv", "u32", heads], ["llama.attention.key_length", "u32", embd / heads],
    ["llama.attention.value_length", "u32", embd / heads], ["llama.vocab_size", "u32", vocab]];
  const tensors = [["token_embd.weight", [embd, vocab], F16]];
  for (let l = 0; l < layers; l++) {
    const p = `blk.${l}.`;
    tensors.push([p + "attn_norm.weight", [embd], F32], [p + "attn_q.weight", [embd, embd], F16],
      [p + "attn_k.weight", [embd, embd], F16], [p + "attn_v.weight", [embd, embd], F16],
      [p + "attn_output.weight", [embd, embd], F16], [p + "ffn_norm.weight", [embd], F32],
      [p + "ffn_gate.weight", [embd, ff], F16], [p + "ffn_up.weight", [embd, ff], F16],
      [p + "ffn_down.weight", [ff, embd], F16]);
  }
  tensors.push(["output_norm.weight", [embd], F32], ["output.weight", [embd, vocab], F16]);
  const align = (x) => x + ((32 - (x % 32)) % 32);
  const w = new Writer().u32(0x46554747).u32(3).u64(tensors.length).u64(kv.length);
  for (const [key, type, value] of kv) {
    w.str(key);
    if (type === "str") w.u32(8).str(value); else w.u32(4).u32(value);
  }
  let offset = 0;
  for (const [name, dims, type] of tensors) {
    w.str(name).u32(dims.length);
    for (const d of dims) w.u64(d);
    w.u32(type).u64(offset);
    offset = align(offset + dims.reduce((a, b) => a * b, 1) * BYTES[type]);
  }
  const raw = w.bytes();
  const header = Buffer.concat([raw, Buffer.alloc(align(raw.length) - raw.length)]);
  return { header, size: header.length + offset };
}
