#pragma once
// The layers of the generic decoder builder (generic_decoder.cc): the tensors a standard
// transformers implementation of each mixer and MLP kind creates, sized from the hyperparameters
// ReadTextHyperparameters found. Names follow the usual transformers layout so that blocks and
// device maps work; shapes follow the reference modeling files named in docs/architectures.md.

#include <string>

#include "memfit/model.h"
#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch::generic {

// Config facts the generic layers need beyond Hyperparameters.
struct Extras {
  bool attention_bias = false;
  bool qkv_bias = false;        // Qwen2-style q/k/v biases
  bool qk_norm = false;         // per-head RMSNorm on q and k
  bool output_gate = false;     // Qwen3-Next/3.5 attention output gate (q_proj doubled)
  uint64_t o_lora_rank = 0;     // DeepSeek-V4 grouped low-rank output projection
  uint64_t o_groups = 0;
  uint64_t index_n_heads = 0;   // DSA indexer heads
  uint64_t index_head_dim = 0;
  bool shared_expert_gate = false;  // Qwen-style sigmoid gate on the shared expert
  bool router_bias = false;     // DeepSeek-V3-style e_score_correction_bias
  // Latent MoE (Nemotron-3 "moe_latent_size", Kimi-K3 "routed_expert_hidden_size"): the routed
  // experts work in this width, with one projection into and out of it per MoE layer.
  uint64_t moe_latent = 0;
  // Recurrent mixers' dimensions (RecurrentState keeps only what the state needs).
  uint64_t linear_k_heads = 0, linear_k_dim = 0, linear_v_heads = 0, linear_v_dim = 0;  // GDN
  uint64_t mamba_d_inner = 0, mamba_groups = 1, mamba_d_state = 0, mamba_heads = 0;
  uint64_t kda_heads = 0, kda_head_dim = 0;
};

// One decoder layer's token mixer (attention of any kind, or a recurrent mixer) under `l`.
void Mixer(ModelBuilder& b, const Quantization& q, const std::string& l, const LayerInfo& L,
           const Hyperparameters& hp, const Extras& x);

// One decoder layer's MLP: dense (gated or not), routed experts with router and shared experts,
// or both (Gemma 4's enable_moe_block).
void Mlp(ModelBuilder& b, const Quantization& q, const std::string& l, const LayerInfo& L,
         const Hyperparameters& hp, const Extras& x);

}  // namespace memfit::arch::generic
