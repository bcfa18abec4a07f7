#pragma once
// A hand-built FP8 (128x128 block) MoE model small enough to count by hand, for the stored-format,
// parallel and deployment tests.

#include <string>
#include <vector>

#include "formats/hf_config_json.h"
#include "memfit/estimate_inference.h"
#include "memfit/model.h"

namespace memfit::estimate_test {

inline void AddTensor(Model& m, const std::string& name, std::vector<uint64_t> shape, Dtype dtype,
                      bool in_head = false) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.numel = 1;
  for (uint64_t d : t.shape) t.numel *= d;
  t.bytes = (t.numel * DtypeBits(dtype) + 7) / 8;
  t.dtype_label = std::string(DtypeName(dtype));
  t.in_head = in_head;
  m.tensors.push_back(std::move(t));
}

// One decoder layer, hidden 16, 4 heads of 8 (2 KV heads), 4 routed experts of width 8, vocab
// 128; every linear in the layer FP8 with one fp32 weight_scale_inv [1, 1] (one 128x128 block):
//   [0] embed_tokens [128, 16] bf16 = 4096     [1] input_layernorm [16] bf16 = 32
//   [2] q_proj [32, 16] = 512 + [3] scale 4    [4] k_proj [8, 16] = 128 + [5] 4
//   [6] v_proj [8, 16] = 128 + [7] 4           [8] o_proj [16, 32] = 512 + [9] 4
//   [10] mlp.gate (router) [4, 16] bf16 = 128
//   experts e = 0..3: up_proj [8, 16] = 128 + 4, down_proj [16, 8] = 128 + 4   (16 tensors)
//   [27] model.norm [16] bf16 = 32             [28] lm_head [128, 16] bf16 = 4096
inline Model TinyFp8Moe() {
  Model m;
  m.name = "tiny-fp8-moe";
  m.model_type = "tiny_moe";
  m.quantization_config = std::make_shared<const JsonValue>(nlohmann::json{{"quant_method", "fp8"},
                                         {"weight_block_size", {128, 128}}});
  m.config_dtype = Dtype::kBF16;
  const std::string p = "model.layers.0.";
  AddTensor(m, "model.embed_tokens.weight", {128, 16}, Dtype::kBF16);
  AddTensor(m, p + "input_layernorm.weight", {16}, Dtype::kBF16);
  for (const auto& [name, out, in] : std::vector<std::tuple<std::string, uint64_t, uint64_t>>{
           {"q_proj", 32, 16}, {"k_proj", 8, 16}, {"v_proj", 8, 16}, {"o_proj", 16, 32}}) {
    AddTensor(m, p + "self_attn." + name + ".weight", {out, in}, Dtype::kF8E4M3);
    AddTensor(m, p + "self_attn." + name + ".weight_scale_inv", {1, 1}, Dtype::kF32);
  }
  AddTensor(m, p + "mlp.gate.weight", {4, 16}, Dtype::kBF16);
  for (int e = 0; e < 4; ++e) {
    const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
    AddTensor(m, x + "up_proj.weight", {8, 16}, Dtype::kF8E4M3);
    AddTensor(m, x + "up_proj.weight_scale_inv", {1, 1}, Dtype::kF32);
    AddTensor(m, x + "down_proj.weight", {16, 8}, Dtype::kF8E4M3);
    AddTensor(m, x + "down_proj.weight_scale_inv", {1, 1}, Dtype::kF32);
  }
  AddTensor(m, "model.norm.weight", {16}, Dtype::kBF16);
  AddTensor(m, "lm_head.weight", {128, 16}, Dtype::kBF16, true);
  Hyperparameters& hp = m.hp;
  hp.hidden_size = 16;
  hp.num_layers = 1;
  hp.num_attention_heads = 4;
  hp.num_kv_heads = 2;
  hp.head_dim = 8;
  hp.intermediate_size = 8;
  hp.moe_intermediate_size = 8;
  hp.vocab_size = 128;
  hp.max_position_embeddings = 64;
  hp.num_experts = 4;
  hp.experts_per_token = 1;
  LayerInfo layer;
  layer.num_heads = 4;
  layer.num_kv_heads = 2;
  layer.head_dim_k = layer.head_dim_v = 8;
  layer.moe = true;
  hp.layers.push_back(layer);
  return m;
}

// vLLM with no fixed overheads (no non-torch memory, no CUDA graphs) and a profile run of 16
// tokens and 16 sequences, so that a budget is the weights, the profile peak and the KV pool:
// the options the hand-worked vLLM tests over TinyFp8Moe start from.
inline InferenceOptions TinyVllmOptions() {
  InferenceOptions o;
  o.engine = Engine::kVllm;
  o.max_batched_tokens = 16;
  o.max_num_seqs = 16;
  o.non_torch_bytes = 0;
  o.cuda_graph_bytes = 0;
  return o;
}

}  // namespace memfit::estimate_test
