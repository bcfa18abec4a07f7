#pragma once
// Multi-head latent attention (DeepSeek-V2's MLA) and the hyperparameters every MLA decoder reads,
// in one place for deepseek.cc (DeepSeek-V2/V3/V3.2, GLM-5, GLM-4.7-Flash), kimi_linear.cc
// (Kimi Linear, Kimi-K3) and mla_families.cc (MiniCPM3, LongCat-Flash). Issue 30: these readers
// were copied by hand into each builder.
//
// The attention module, as transformers' DeepseekV2Attention and every MLA class after it creates
// it (`attn` = "<layer>.self_attn"; H hidden, n heads):
//   q_lora_rank set:  q_a_proj [q_lora, H] (+bias), q_a_layernorm [q_lora], q_b_proj
//                     [n x (qk_nope + qk_rope), q_lora];
//   q_lora_rank null: q_proj [n x (qk_nope + qk_rope), H];
//   kv_a_proj_with_mqa [kv_lora + qk_rope, H] (+bias), kv_a_layernorm [kv_lora],
//   kv_b_proj [n x (qk_nope + v), kv_lora], o_proj [H, n x v] (+bias);
// the biases with "attention_bias". Engines that implement MLA (vLLM, SGLang) cache one latent of
// kv_lora + qk_rope elements per token and layer (estimate/kv_cache.cc, AttentionKind::kMla).

#include <cstdint>
#include <string>
#include <string_view>

#include "memfit/architecture.h"
#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

struct MlaDims {
  uint64_t heads = 0;    // "num_attention_heads"
  uint64_t q_lora = 0;   // "q_lora_rank"; 0 (null or absent): a plain q_proj
  uint64_t kv_lora = 0;  // "kv_lora_rank"
  uint64_t nope = 0;     // "qk_nope_head_dim"
  uint64_t rope = 0;     // "qk_rope_head_dim"
  uint64_t v = 0;        // "v_head_dim"
};

// Where the common decoder hyperparameters come from when a family renames them.
struct MlaBasicsKeys {
  std::string_view layers = "num_hidden_layers";
  std::string_view intermediate = "intermediate_size";
  bool tie = false;  // "tie_word_embeddings" default of the config class
};

// Reads vocab_size, hidden_size, the layer count, num_attention_heads, num_key_value_heads
// (default: the heads), the dense MLP width, max_position_embeddings (default 0),
// tie_word_embeddings and "hidden_act" (default silu) into model.hp; RMSNorm, gated MLP. Unlike
// ReadDecoderBasics no head_dim: an MLA head is qk_nope + qk_rope wide, not hidden / heads.
void ReadMlaDecoderBasics(ModelBuilder& b, const HfConfig& c, const MlaBasicsKeys& keys = {});

// The MLA dimensions of `c` for `heads` heads. "v_head_dim" is required unless `v_default` > 0.
MlaDims ReadMlaDims(ModelBuilder& b, const HfConfig& c, uint64_t heads, uint64_t v_default = 0);

// Records an error naming the keys when a dimension MLA divides by or sizes with is zero.
void CheckMlaDims(ModelBuilder& b, const HfConfig& c, const MlaDims& d);

// hp.head_dim = qk_nope + qk_rope, and hp's q_lora_rank, kv_lora_rank, qk_nope_head_dim,
// qk_rope_head_dim and v_head_dim.
void SetMlaHyperparameters(Hyperparameters& hp, const MlaDims& d);

// One MLA layer's LayerInfo (heads, the config's KV heads, key and value head widths).
LayerInfo MlaLayerInfo(const Hyperparameters& hp, const MlaDims& d);

// The attention tensors above under `attn`; `bias` is "attention_bias".
void EmitMla(ModelBuilder& b, const Quantization& q, const std::string& attn, const MlaDims& d,
             bool bias);

// Which layers hold routed experts and how many MTP layers follow: "first_k_dense_replace"
// (default `first_dense_default`), "moe_layer_freq" (default 1, never zero),
// "num_nextn_predict_layers" (default 0).
struct MoeSchedule {
  uint64_t first_dense = 0;
  uint64_t freq = 1;
  uint64_t mtp = 0;
  bool IsMoe(uint64_t layer) const { return layer >= first_dense && layer % freq == 0; }
};
MoeSchedule ReadMoeSchedule(ModelBuilder& b, const HfConfig& c, uint64_t first_dense_default = 0);

}  // namespace memfit::arch
