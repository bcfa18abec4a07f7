#pragma once
// Test helpers: tensors for models built by hand in estimator and planner tests.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "memfit/model.h"

namespace memfit::testing {

// A tensor of `shape` and `dtype`, its element count and bytes computed.
inline Tensor ShapedTensor(std::string name, std::vector<uint64_t> shape,
                           Dtype dtype = Dtype::kF32) {
  uint64_t n = 1;
  for (auto d : shape) n *= d;
  return Tensor{.name = std::move(name), .shape = std::move(shape), .dtype = dtype, .numel = n,
                .bytes = n * DtypeBits(dtype) / 8};
}

// ShapedTensor labelled with its dtype's name ("F32", "BF16"), as a safetensors header gives it.
inline Tensor StoredTensor(std::string name, std::vector<uint64_t> shape, Dtype dtype) {
  Tensor t = ShapedTensor(std::move(name), std::move(shape), dtype);
  t.dtype_label = std::string(DtypeName(dtype));
  return t;
}

// A hand-made model of type "toy" and class `architecture`, holding `tensors`, as the renderers'
// tests show one: its source "hand-made", its one assumption "made by hand".
inline Model ToyModel(std::string name, std::string architecture, std::vector<Tensor> tensors) {
  Model m;
  m.name = std::move(name);
  m.source = "hand-made";
  m.model_type = "toy";
  m.architecture = std::move(architecture);
  m.tensors = std::move(tensors);
  m.assumptions = {"made by hand"};
  return m;
}

// A one-dimensional U8 tensor of `bytes` bytes, for tests that place or count bytes only;
// `tied_to` names the tensor it shares storage with.
inline Tensor ByteTensor(std::string name, uint64_t bytes, std::string tied_to = "") {
  Tensor t;
  t.name = std::move(name);
  t.shape = {bytes};
  t.dtype = Dtype::kU8;
  t.numel = bytes;
  t.bytes = bytes;
  t.tied_to = std::move(tied_to);
  return t;
}

// The shape of a Llama-style decoder layer: hidden size, heads (and KV heads) of head_dim, MLP
// width.
struct LlamaLayerShape {
  uint64_t hidden = 0;
  uint64_t heads = 0;
  uint64_t kv_heads = 0;
  uint64_t head_dim = 0;
  uint64_t intermediate = 0;
};

// The hyperparameters of a one-layer Llama-style decoder of `s` (gated MLP, RMSNorm); the rest
// (vocabulary, tying) as Hyperparameters' defaults.
inline Hyperparameters OneLlamaLayer(const LlamaLayerShape& s) {
  Hyperparameters hp;
  hp.hidden_size = s.hidden;
  hp.num_layers = 1;
  hp.num_attention_heads = s.heads;
  hp.num_kv_heads = s.kv_heads;
  hp.head_dim = s.head_dim;
  hp.intermediate_size = s.intermediate;
  hp.gated_mlp = true;
  hp.norm = "rmsnorm";
  hp.layers = {{.num_heads = s.heads, .num_kv_heads = s.kv_heads, .head_dim_k = s.head_dim,
                .head_dim_v = s.head_dim, .intermediate_size = s.intermediate}};
  return hp;
}

// A tiny bf16 language model: embed [100, 64], one layer with q_proj [64, 64] + bias [64] and a
// norm [64], lm_head [100, 64] (in the head): 6400 + 4096 + 64 + 64 + 6400 = 17024 parameters,
// 4096 of them in the one linear layer.
inline Model TinyBf16Lm() {
  Model m;
  m.name = "tiny";
  auto add = [&](std::string name, std::vector<uint64_t> shape, bool head = false) {
    Tensor t = ShapedTensor(std::move(name), std::move(shape), Dtype::kBF16);
    t.in_head = head;
    m.tensors.push_back(std::move(t));
  };
  add("model.embed_tokens.weight", {100, 64});
  add("model.layers.0.self_attn.q_proj.weight", {64, 64});
  add("model.layers.0.self_attn.q_proj.bias", {64});
  add("model.layers.0.input_layernorm.weight", {64});
  add("lm_head.weight", {100, 64}, true);
  m.hp.vocab_size = 100;
  m.hp.hidden_size = 64;
  return m;
}

}  // namespace memfit::testing
