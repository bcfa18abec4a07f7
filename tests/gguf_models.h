#pragma once
// Model-shaped GGUF headers for tests and benchmarks (virtual zero data, so an 8B model costs
// only its header). Shapes follow llama.cpp's tensor layout (ne0 = input features).

#include <functional>
#include <string>

#include "gguf_writer.h"
#include "memfit/gguf_model.h"

namespace memfit::testing {

inline constexpr uint32_t kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ8_0 = 8, kQ4_K = 12, kQ6_K = 14;

struct GgufShape {
  std::string arch = "llama";
  uint32_t n_layer = 2, n_embd = 256, n_head = 4, n_head_kv = 4, head_dim = 64, n_ff = 512;
  uint32_t n_vocab = 1000, ctx = 4096;
  bool tied = false;
  bool rope_freqs = false;
  uint32_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0;
  // ggml type of a 2-D weight (name, layer or -1); 1-D tensors are F32.
  std::function<uint32_t(const std::string&, int)> type_of = [](const std::string&, int) { return kF16; };
  std::function<void(GgufWriter&)> extra_keys{};
};

inline GgufWriter MakeGgufWriter(const GgufShape& s) {
  GgufWriter w;
  const std::string a = s.arch;
  w.Str("general.architecture", a).U32(a + ".block_count", s.n_layer).U32(a + ".context_length", s.ctx)
      .U32(a + ".embedding_length", s.n_embd).U32(a + ".feed_forward_length", s.n_ff)
      .U32(a + ".attention.head_count", s.n_head).U32(a + ".attention.head_count_kv", s.n_head_kv)
      .U32(a + ".attention.key_length", s.head_dim).U32(a + ".attention.value_length", s.head_dim)
      .U32(a + ".vocab_size", s.n_vocab);
  if (s.n_expert) {
    w.U32(a + ".expert_count", s.n_expert).U32(a + ".expert_used_count", s.n_expert_used)
        .U32(a + ".expert_feed_forward_length", s.n_ff_exp);
  }
  if (s.extra_keys) s.extra_keys(w);
  const uint64_t E = s.n_embd, q = uint64_t{s.n_head} * s.head_dim, kv = uint64_t{s.n_head_kv} * s.head_dim;
  auto mat = [&](const std::string& n, std::vector<uint64_t> dims, int il) { w.Tensor(n, dims, s.type_of(n, il)); };
  mat("token_embd.weight", {E, s.n_vocab}, -1);
  if (s.rope_freqs) w.Tensor("rope_freqs.weight", {s.head_dim / 2}, kF32);
  for (uint32_t il = 0; il < s.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    const int l = static_cast<int>(il);
    w.Tensor(p + "attn_norm.weight", {E}, kF32);
    mat(p + "attn_q.weight", {E, q}, l);
    mat(p + "attn_k.weight", {E, kv}, l);
    mat(p + "attn_v.weight", {E, kv}, l);
    mat(p + "attn_output.weight", {q, E}, l);
    w.Tensor(p + "ffn_norm.weight", {E}, kF32);
    if (s.n_expert) {
      w.Tensor(p + "ffn_gate_inp.weight", {E, s.n_expert}, kF32);
      mat(p + "ffn_gate_exps.weight", {E, s.n_ff_exp, s.n_expert}, l);
      mat(p + "ffn_up_exps.weight", {E, s.n_ff_exp, s.n_expert}, l);
      mat(p + "ffn_down_exps.weight", {s.n_ff_exp, E, s.n_expert}, l);
    } else {
      mat(p + "ffn_gate.weight", {E, s.n_ff}, l);
      mat(p + "ffn_up.weight", {E, s.n_ff}, l);
      mat(p + "ffn_down.weight", {s.n_ff, E}, l);
    }
  }
  w.Tensor("output_norm.weight", {E}, kF32);
  if (!s.tied) mat("output.weight", {E, s.n_vocab}, -1);
  return w;
}

inline Result<Model> MakeGgufModel(const GgufShape& s, const std::string& name = "test.gguf") {
  GgufWriter w = MakeGgufWriter(s);
  VirtualGgufSource source(w.Header(), w.DataBytes(), name);
  MEMFIT_ASSIGN_OR_RETURN(GgufFile f, ReadGgufHeader(source));
  return ModelFromGguf({GgufShard{name, std::move(f)}}, name);
}

// llama.cpp's use_more_bits (src/llama-quant.cpp): layers that Q4_K_M/Q5_K_M keep at Q6_K for
// attn_v and ffn_down.
inline bool UseMoreBits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// Meta-Llama-3.1-8B (config.json: 32 layers, hidden 4096, 32 heads, 8 KV heads, FFN 14336,
// vocab 128256, context 131072, untied, rope_freqs) with a per-tensor type chooser.
inline GgufShape Llama31_8B(std::function<uint32_t(const std::string&, int)> type_of) {
  GgufShape s{.arch = "llama", .n_layer = 32, .n_embd = 4096, .n_head = 32, .n_head_kv = 8, .head_dim = 128,
              .n_ff = 14336, .n_vocab = 128256, .ctx = 131072, .tied = false, .rope_freqs = true};
  s.type_of = std::move(type_of);
  return s;
}

// Q4_K_M mix (llama.cpp llama_tensor_get_type): output Q6_K; attn_v and ffn_down Q6_K where
// use_more_bits, else Q4_K; every other 2-D weight Q4_K.
inline uint32_t Q4KM(const std::string& name, int il) {
  if (name == "output.weight") return kQ6_K;
  if ((name.find("attn_v") != std::string::npos || name.find("ffn_down") != std::string::npos) &&
      UseMoreBits(il, 32)) {
    return kQ6_K;
  }
  return kQ4_K;
}

// Shard `no` (0-based) of a two-file gguf-split model of a tiny llama (2 layers, 64 wide): the
// metadata in the first shard, split.* keys in both, the given Q8_0 [64, rows] tensors in each.
inline GgufWriter TinySplitShard(uint16_t no, const std::vector<std::pair<std::string, uint64_t>>& tensors) {
  GgufWriter w;
  if (no == 0) {
    w.Str("general.architecture", "llama")
        .U32("llama.block_count", 2)
        .U32("llama.context_length", 2048)
        .U32("llama.embedding_length", 64)
        .U32("llama.feed_forward_length", 128)
        .U32("llama.attention.head_count", 4)
        .U32("llama.vocab_size", 100);
  }
  w.U16("split.no", no).U16("split.count", 2).I32("split.tensors.count", 4);
  for (const auto& [name, rows] : tensors) w.Tensor(name, {64, rows}, kQ8_0);
  return w;
}

}  // namespace memfit::testing
