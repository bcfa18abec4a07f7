#pragma once
// Multi-head latent attention (DeepSeek-V2's MLA), the hyperparameters every MLA decoder reads,
// and MlaFamilySpec: an MLA + routed-MoE family as a row (issue 30), built by BuildMla from one
// row per model_type (mla_families.cc). kimi_linear.cc, LongCat-Flash (mla_families.cc) and
// minimax_m3.cc use the pieces around layouts a row cannot say.
//
// The attention, as transformers' DeepseekV2Attention creates it under `attn` (H hidden, n heads):
// with q_lora_rank q_a_proj [q_lora, H] (+bias), q_a_layernorm, q_b_proj [n x (nope + rope),
// q_lora], else q_proj [n x (nope + rope), H]; kv_a_proj_with_mqa [kv_lora + rope, H] (+bias),
// kv_a_layernorm [kv_lora], kv_b_proj [n x (nope + v), kv_lora], o_proj [H, n x v] (+bias); biases
// with "attention_bias". vLLM and SGLang cache one latent of kv_lora + rope per token and layer.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

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
// tie_word_embeddings and "hidden_act" (default silu) into model.hp; RMSNorm, gated MLP. No
// head_dim: an MLA head is qk_nope + qk_rope wide, not hidden / heads.
void ReadMlaDecoderBasics(ModelBuilder& b, const HfConfig& c, const MlaBasicsKeys& keys = {});

// The MLA dimensions of `c` for `heads` heads ("v_head_dim" required unless `v_default` > 0), also
// into model.hp (head_dim = qk_nope + qk_rope); an error when one MLA sizes with is zero.
MlaDims ReadMlaDims(ModelBuilder& b, const HfConfig& c, uint64_t heads, uint64_t v_default = 0);

// One MLA layer's LayerInfo (heads, the config's KV heads, key and value head widths).
LayerInfo MlaLayerInfo(const Hyperparameters& hp, const MlaDims& d);

// The query projection under `attn`: with a LoRA rank `q_lora`, q_a_proj [q_lora, hidden]
// (biased with `a_bias`), RMSNorm q_a_layernorm and q_b_proj [out, q_lora]; else q_proj [out,
// hidden] (biased with `q_bias`).
void EmitQueryProjection(ModelBuilder& b, const Quantization& q, const std::string& attn,
                         uint64_t hidden, uint64_t q_lora, uint64_t out, bool a_bias, bool q_bias);

// The MLA attention tensors under `attn`; `bias` is "attention_bias".
void EmitMla(ModelBuilder& b, const Quantization& q, const std::string& attn, const MlaDims& d,
             bool bias);

// Grouped-query attention under `attn` (glm4_moe, MiniMax-M3): q_proj [heads x head_dim, H],
// k_proj and v_proj [kv_heads x head_dim, H] (biased with `qkv_bias`), o_proj without bias and,
// with `qk_norm`, RMSNorms q_norm/k_norm of head_dim (`per_head`) or of the whole projection.
struct GqaShape {
  uint64_t heads = 0, kv_heads = 0, head_dim = 0;
  bool qkv_bias = false, qk_norm = false, per_head = true;
};
void EmitGqa(ModelBuilder& b, const Quantization& q, const std::string& attn, const GqaShape& s);

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

// Marks the `count` multi-token-prediction layers emitted from tensor `begin` on as stored, not
// loaded, and notes "<count> multi-token-prediction <what>, <bytes> bytes) <tail>"; nothing when
// `count` is 0 or the builder failed.
void MarkMtpStoredOnly(
    ModelBuilder& b, size_t begin, uint64_t count, std::string_view what,
    std::string_view tail = "are stored in the checkpoint but not loaded by transformers");

// --- An MLA family as a row ----------------------------------------------------------------------
// transformers' DeepseekV2ForCausalLM: model.embed_tokens; per layer input_layernorm, self_attn,
// mlp, post_attention_layernorm; model.norm; the task head; the MTP layers. A dense mlp is
// {gate,up,down}_proj of intermediate_size; a routed one (layer i >= "first_k_dense_replace" with
// i % "moe_layer_freq" == 0, unless "mlp_layer_types" says "dense"/"sparse") mlp.gate.weight
// [E, H] ("n_routed_experts"), the router bias, experts.N.{gate,up,down}_proj of
// "moe_intermediate_size" ("num_experts_per_tok" active) and shared_experts of that width x
// "n_shared_experts". Every default is the DeepSeek-V3 row's.

enum class MlaAttention : uint8_t {
  kMla,
  // MLA and DeepSeek sparse attention's lightning indexer on every layer: self_attn.indexer.{wq_b
  // [index_n_heads x index_head_dim, q_lora_rank], wk [index_head_dim, H], k_norm (LayerNorm),
  // weights_proj [index_n_heads, H] (not quantized)}, caching index_head_dim a token; "index_topk".
  kDsa,
  // kDsa on GlmMoeDsaConfig's "full" layers: "indexer_types" ("full"/"shared"), else
  // "index_topk_pattern" ('F'/'S'), else max(i - "index_skip_topk_offset" (2) + 1, 0) %
  // "index_topk_freq" (1) == 0. A "shared" layer reuses the previous top-k: no indexer.
  kDsaGlm,
  // Grouped-query attention (EmitGqa, biased with "attention_bias", q/k norms with
  // "use_qk_norm"); "head_dim" (default 128), rotary int(head_dim x "partial_rotary_factor").
  kGqa,
};

enum class MlaRouterBias : uint8_t {
  kNone,
  kNoauxTc,  // mlp.gate.e_score_correction_bias [E] (float32) when "topk_method" is "noaux_tc"
  kAlways,   // the same buffer, always
};

// The rotary buffers (non-persistent float32).
enum class MlaRope : uint8_t {
  // deepseek-ai's remote code under kTransformers442: self_attn.rotary_emb.{inv_freq [rope / 2],
  // cos_cached, sin_cached [max_position_embeddings, rope]} per layer; else model.rotary_emb.
  kRemoteCode442,
  // model.rotary_emb.inv_freq [rotary / 2] in both conventions; rotary is qk_rope x
  // "partial_rotary_factor" when rotary_factor is set (kGqa: the attention's rotary width).
  kModelLevel,
};

enum class MlaMtp : uint8_t {
  kNone,  // "num_nextn_predict_layers" not read
  // model.layers.{L + k}: embed_tokens, enorm, hnorm, eh_proj [H, 2H], a decoder layer,
  // shared_head.norm, shared_head.head; stored, not loaded.
  kOwnEmbed,
  kSharedEmbed,  // without embed_tokens and shared_head.head (shared with the model)
};

struct MlaFamilySpec {
  bool tie_default = false;    // "tie_word_embeddings" default of the config class
  bool v_from_hidden = false;  // "v_head_dim" default hidden_size // heads; else required
  MlaAttention attention = MlaAttention::kMla;
  std::string_view mlp_bias_key = "";  // the dense MLP's bias flag; "": never biased
  uint64_t first_dense_default = 0;    // "first_k_dense_replace" default
  MlaRouterBias router_bias = MlaRouterBias::kNoauxTc;
  bool fused_experts = false;  // mlp.experts.{gate_up_proj, down_proj} as expert_kit.h stores them
  MlaMtp mtp = MlaMtp::kOwnEmbed;
  MlaRope rope = MlaRope::kRemoteCode442;
  double rotary_factor = 0;    // "partial_rotary_factor" default where it shapes the rotary width
  bool embed_scale = false;    // model.embed_tokens.embed_scale, a non-persistent scalar buffer
  std::string_view note = "";  // a fact for Model::notes
};

Result<Model> BuildMla(const HfConfig& config, const BuildOptions& options,
                       const MlaFamilySpec& spec);

}  // namespace memfit::arch
