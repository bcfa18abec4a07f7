#pragma once
// A decoder family as data (issue 30; STYLE.md habit 9): the parts a model.embed_tokens /
// model.layers.N / model.norm decoder is made of, the config.json key of each hyperparameter and
// the buffers each transformers version holds. BuildDecoder (decoder_skeleton.cc) builds any
// spec; the rows are in decoder_families.cc, one per model_type, each citing its source.
// Tensor order inside a layer, as transformers registers the modules: input norm,
// self_attn.{q,k,v,o}_proj, the q/k norms, [4.42 rotary buffers], the MLP (dense, or the MoE
// layout's router, experts and shared expert), the norms after it. A row sets only what differs
// from the defaults stated here.

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "memfit/architecture.h"
#include "model/arch/table_row.h"

namespace memfit::arch {

enum class MlpForm : uint8_t {
  kGated,        // mlp.{gate,up,down}_proj
  kFusedGateUp,  // mlp.gate_up_proj [2I, H], mlp.down_proj
  kPlain,        // mlp.{up,down}_proj
};

enum class QkNorm : uint8_t {
  kNone,
  kPerHead,    // RMSNorm [head_dim] named q_norm_name / k_norm_name
  kWhole,      // RMSNorm over the whole projection: q [heads x head_dim], k [kv x head_dim]
  kCohere,     // q_norm.weight [heads, head_dim], k_norm.weight [kv, head_dim]
  kMiniMaxM2,  // kWhole, or kPerHead when "qk_norm_type" is "per_head" (default "per_layer")
};

enum class SlidingRuleKind : uint8_t {
  kNone,            // no sliding layers; "layer_types" not read
  kNoneCheckTypes,  // no sliding layers; a malformed "layer_types" is still an error
  kAll,             // every layer, when window_key is set
  // "layer_types", else every pattern-th layer global (pattern from pattern_key, default
  // pattern_default; 1: none slide, 2: even layers slide); with prefix_key, the first that many
  // layers use prefix_pattern_key's pattern (default 1) and the pattern restarts after them.
  kPattern,
  kSmolLm3,  // "layer_types", else NoPE layers when "use_sliding_window" (SmolLM3Config)
  // Exaone4Config: null window: none; "layer_types"; "sliding_window_pattern" an integer
  // (default 4) or a string of 'L' and 'G' repeated from layer 0, the last layer global.
  kExaone4,
  kAfterMaxWindow,  // "use_sliding_window": layers >= "max_window_layers" (qwen2_moe)
};

enum class MoeLayout : uint8_t {
  kNone,
  // Every layer: block_sparse_moe.gate [E, H], experts.N.{w1,w2,w3} of intermediate_size; E
  // "num_local_experts".
  kMixtral,
  // Layers not in "mlp_only_layers" with (i + 1) % "decoder_sparse_step" == 0: mlp.gate,
  // mlp.experts.N of "moe_intermediate_size" (E "num_experts"), with shared_expert_key > 0
  // mlp.shared_expert and mlp.shared_expert_gate [1, H].
  kQwen,
  // Every layer: block_sparse_moe.input_linear [E, 2I, H], output_linear [E, H, I],
  // router.layer [E, H]; shared_mlp.{input,output}_linear with shared_expert_key > 0.
  kGraniteFused,
  // routed_moe.h: sparse layers by dense_layers, mlp.<router_name>, the routed_bias, experts of
  // moe_inter_key, shared experts of (width x shared_count_key).
  kRouted,
  // Sparse layers by "mlp_layer_types" (default: all but the first): mlp.gate,
  // mlp.experts.e_score_correction_bias [E], experts, mlp.shared_expert of shared_expert_key.
  kLaguna,
  // Every layer: biased mlp.router, experts.gate_up_proj [E, H, 2I] and down_proj [E, I, H] with
  // their biases; under "quant_method": "mxfp4" *_blocks [E, out, in / 32, 16] and *_scales
  // [E, out, in / 32] (uint8), H and I divisible by 32. Top-k "num_experts_per_tok", else
  // OpenAI's "experts_per_token" (4).
  kGptOss,
  // Ernie4_5_MoeConfig: layers (i + 1) % "moe_layer_interval" == 0 within
  // ["moe_layer_start_index", "moe_layer_end_index" (-1: last)]: float32 mlp.gate [E, H] and
  // mlp.moe_statics.e_score_correction_bias [1, E], experts biased by mlp_bias_key, shared
  // experts of (width x "moe_num_shared_experts"); absent keys take the printed class defaults.
  kErnie,
  // HunYuanMoEV1Config: every layer float32 mlp.gate.wg [E, H], experts of
  // "moe_intermediate_size" and the always-built mlp.shared_mlp of intermediate_size x
  // "num_shared_expert"; each key an integer or one per layer.
  kHunYuan,
  // Step3p5Model: sparse layers "moe_layers_enum", else from "first_k_dense_replace" (1):
  // moe.gate, float32 moe.router_bias, experts packed per projection moe.{gate,up,down}_proj
  // (moe.experts.N when quantized), share_expert of "share_expert_dim".
  kStep,
};

// kRouted: which layers are dense (a dense MLP of dense_inter_key, else intermediate_size).
enum class DenseLayers : uint8_t {
  kNone,    // every layer sparse
  kFirstK,  // the first dense_first_key layers (default dense_first_default)
  // "mlp_layer_types", else "is_moe_layer" (bools), else the first dense_first_key layers
  // (default dense_first_default; dense_first_key "": always the default).
  kMlpLayerTypes,
};

// kRouted: the aux-loss-free routing bias [E], float32.
enum class RoutedBias : uint8_t {
  kNone,
  kGateBuffer,   // mlp.gate.e_score_correction_bias, a persistent buffer
  kBlockBuffer,  // mlp.e_score_correction_bias, a persistent buffer of the MoE block
  kExpertBias,   // mlp.expert_bias, an nn.Parameter
};

// An attention output gate beside q/k/v/o.
enum class AttnGate : uint8_t {
  kNone,
  // g_proj [heads x LayerKinds::gate_per_head, H], and with "swa_attention_sink_enabled"
  // self_attn.sink [heads] on sliding layers (laguna).
  kLaguna,
  kAfmoe,     // self_attn.gate_proj [heads x head_dim, H] after the q/k norms
  kHeadWise,  // self_attn.g_proj [heads, H] when "use_head_wise_attn_gate" (step3p5)
};

// Multi-token-prediction layers: "num_nextn_predict_layers" unless said otherwise.
enum class Mtp : uint8_t {
  kNone,
  // model.mtp_layers.N: token_layernorm, hidden_layernorm, input_proj [H, 2H], a decoder layer,
  // final_layernorm; built and loaded (mimo).
  kMiMo,
  // "num_mtp_modules" with "use_mtp": not built by the class, an assumption says so.
  kMiniMaxNote,
  // (default 1) mtp.fc [H, 2H], mtp.layers.N (dense layers), mtp.norm,
  // mtp.pre_fc_norm_{hidden,embedding}; stored, not loaded.
  kExaoneMoe,
  // model.layers.{L + k} (a sparse layer) with enorm, hnorm, eh_proj [H, 2H], final_layernorm;
  // stored, not loaded.
  kHyV3,
  // After the head: model.mtp_emb_norm.K, mtp_hidden_norm.K, mtp_linear_proj.K [H, 2H]
  // (mlp_bias_key) and mtp_block.K (a dense layer); stored, not loaded.
  kErnie,
  // (at most 64) after the head: model.layers.{L + k} with enorm, hnorm, eh_proj [H, 2H],
  // shared_head.norm, shared_head.output [V, H] and a dense full-attention layer; stored, not
  // loaded; Step3p5's assumptions follow them.
  kStep,
};

// Rotary buffers: non-persistent float32 inv_freq [rotary_dim / 2].
enum class Rope : uint8_t {
  kModelLevel,   // model.rotary_emb.inv_freq in every version
  kPerLayer442,  // 4.42: one per attention module, inside the layer; else model-level
  // 4.42 as LlamaModel: one per attention module after model.norm (plus a model-level one with
  // "rope_scaling" unless rope_cached); transformers >= 4.48 model-level.
  kLlama442,
  kPerLayerType,       // model-level, one pair per layer type (PerLayerTypeRotary, laguna)
  kModelLevelIfTheta,  // model-level only when a rope_theta is set (olmo_hybrid)
  // 4.42: one inv_freq [rotary width / 2] per attention module after the layer's norms; else
  // model-level (phi3).
  kPerLayerAfterNorms442,
  kNone,  // no rotary buffer (step3p5)
};

// Lightning (linear) attention layers among the softmax ones: self_attn.qkv_proj
// [3 heads x head_dim, H], output_gate, RMSNorm norm and out_proj; a [heads, head_dim, head_dim]
// state in the model dtype, no KV cache.
enum class Lightning : uint8_t {
  kNone,
  // MiniMaxConfig: "layer_types" ("linear_attention"), else odd layers; persistent slope_rate,
  // query_decay, key_decay, diagonal_decay buffers of "block_size".
  kMiniMax,
  // MiniMax-M1: "attn_type_list" (0 lightning) required; "shared_intermediate_size" > 0 adds
  // shared_mlp and coefficient [1, H].
  kMiniMaxM1,
};

// Gated DeltaNet layers among the attention ones: a conv and recurrent state, no KV cache.
enum class DeltaNet : uint8_t {
  kNone,
  // OlmoHybridGatedDeltaNet ("layer_types" "linear_attention", default i % 4 != 3) in a
  // LlamaDecoderLayer (input_layernorm, post_attention_layernorm) (decoder_layer_kinds.h).
  kOlmoHybrid,
};

struct DecoderSpec {
  // Hyperparameters (ReadDecoderBasics, decoder_kit.h).
  bool intermediate_required = false;       // "intermediate_size" required, else 0
  bool tie_default = false;                 // "tie_word_embeddings" default
  std::string_view act_key = "hidden_act";  // the activation's key and default
  std::string_view act_default = "silu";
  uint64_t head_dim_default = 0;         // the class's "head_dim" default; 0: hidden / heads
  std::string_view kv_heads_key = "";    // replaces "num_key_value_heads" when present
  std::string_view hp_norm = "rmsnorm";  // Hyperparameters::norm
  std::string_view note = "";            // a fact for Model::notes
  // Without "torch_dtype": weights taken as bfloat16 (not float32) and this assumption printed.
  std::string_view bf16_without_dtype = "";
  bool norm_bias = false;  // every norm a LayerNorm with weight and bias, not an RMSNorm
  // Attention.
  std::string_view bias_key = "attention_bias";  // q/k/v (and o) biases
  bool bias_default = false;
  bool qkv_bias = false;             // q/k/v always biased, o_proj never
  bool o_bias = true;                // o_proj follows bias_key
  std::string_view o_bias_key = "";  // o_proj's own flag
  bool fused_qkv = false;            // self_attn.qkv_proj [(heads + 2 kv) x head_dim, H]
  bool sinks = false;                // self_attn.sinks [heads] after o_proj, on every layer
  // Cross-layer attention: with "use_cla", a layer i with i % "cla_share_factor" != 0 has no
  // k/v_proj and reuses the previous layer's KV cache.
  bool cla = false;
  QkNorm qk_norm = QkNorm::kNone;
  std::string_view qk_norm_key = "";  // the q/k norms only when this flag is true
  bool qk_norm_default = true;        // its default
  std::string_view q_norm_name = "q_norm", k_norm_name = "k_norm";
  SlidingRuleKind sliding = SlidingRuleKind::kNone;
  std::string_view window_key = "sliding_window";
  uint64_t window_default = 0;
  bool window_below_context = false;  // a window >= "max_position_embeddings" is full attention
  std::string_view pattern_key = "";
  uint64_t pattern_default = 0;
  std::string_view prefix_key = "", prefix_pattern_key = "";
  Rope rope = Rope::kModelLevel;
  bool rope_cached = false;  // 4.42 per-layer: also cos_cached/sin_cached [max_pos, head_dim]
  double rotary_factor = 0;  // "partial_rotary_factor" default when it shapes inv_freq
  bool rope_local = false;   // also model.rotary_emb_local.inv_freq
  bool embed_scale = false;  // model.embed_tokens.embed_scale buffer
  // MLP.
  MlpForm mlp = MlpForm::kGated;
  std::string_view mlp_bias_key = "mlp_bias";  // the MLP's bias flag; "": never biased
  MoeLayout moe = MoeLayout::kNone;
  std::string_view routing_bias_key = "";   // kMixtral: e_score_correction_bias [E] (f32)
  std::string_view shared_expert_key = "";  // the shared expert's width
  bool moe_width_in_hp = false;  // kMixtral: hp.moe_intermediate_size = intermediate_size
  // Norms: the pre-attention one ("" none), those after the MLP in order, the final one.
  std::string_view input_norm = "input_layernorm";
  std::array<std::string_view, 3> after_mlp_norms = {"post_attention_layernorm", "", ""};
  bool norms_before_mlp = false;  // after_mlp_norms precede the MLP in the tensor order
  bool final_norm = true;
  std::string_view lm_bias_key = "";  // lm_head's bias flag
  Mtp mtp = Mtp::kNone;
  // kRouted MoE (routed_moe.h).
  std::string_view experts_key = "num_experts";
  std::string_view moe_inter_key = "moe_intermediate_size";  // the routed experts' width
  std::string_view router_name = "gate";                     // mlp.<router_name>.weight
  RoutedBias routed_bias = RoutedBias::kNone;
  std::string_view shared_count_key = "";  // shared experts' count key
  DenseLayers dense_layers = DenseLayers::kNone;
  std::string_view dense_first_key = "";
  uint64_t dense_first_default = 0;
  std::string_view dense_inter_key = "";  // dense layers' width when not intermediate_size
  Lightning lightning = Lightning::kNone;
  bool router_f32 = false;               // kMixtral: the router gate stored in float32
  std::string_view rotary_dim_key = "";  // the rotary width's key (default head_dim)
  // Per-layer query heads (q_proj, o_proj, gate widths and LayerInfo).
  std::string_view heads_per_layer_key = "";
  // Sliding layers' query heads (default num_attention_heads); "attention_other_setting"'s
  // num_attention_heads wins when present.
  std::string_view sliding_heads_key = "";
  AttnGate attn_gate = AttnGate::kNone;
  DeltaNet delta_net = DeltaNet::kNone;
};

// Builds the decoder `spec` describes from `config` (decoder_skeleton.cc).
Result<Model> BuildDecoder(const HfConfig& config, const BuildOptions& options,
                           const DecoderSpec& spec);

// BuildDecoder for one spec, as an ArchitectureBuilderFn (a registry row, a composed text model).
template <const DecoderSpec& kSpec>
inline constexpr ArchitectureBuilderFn BuildSpec = BuildRow<BuildDecoder, kSpec>;

// The rows that other builders compose (vision-language and omni models' text models).
extern const DecoderSpec kLlamaSpec, kMistralSpec, kQwen2Spec, kQwen3Spec, kQwen3MoeSpec, kGlm4Spec,
    kGemmaSpec, kGemma2Spec, kGemma3TextSpec;

// The registry rows of every DecoderSpec family (decoder_families.cc).
const std::vector<ArchitectureBuilder>& DecoderFamilyBuilders();

}  // namespace memfit::arch
