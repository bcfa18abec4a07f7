#pragma once
// A decoder family as data (issue 30; STYLE.md habit 9): the parts a model.embed_tokens /
// model.layers.N / model.norm decoder is made of, the config.json keys each hyperparameter comes
// from, and the buffers each transformers version holds. BuildDecoder (decoder_skeleton.cc) builds
// any spec; the rows are in decoder_families.cc, one per model_type, each citing its source.
//
// Tensor order inside a layer, as transformers registers the modules:
//   input norm, self_attn.{q,k,v,o}_proj, the q/k norms, [4.42 per-layer rotary buffers],
//   the MLP (dense, or the MoE layout's router, experts and shared expert), the norms after it.
// Every field is plain data with its default stated here; a row sets only where it differs.

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "memfit/architecture.h"
#include "model/arch/table_row.h"

namespace memfit::arch {

// How the common hyperparameters are read and checked.
enum class DecoderBasics : uint8_t {
  // vocab_size, hidden_size, num_hidden_layers, num_attention_heads required;
  // num_key_value_heads (default heads), intermediate_size (default 0), "head_dim" (explicit,
  // else DecoderSpec::head_dim_default, else hidden / heads, which must divide).
  kLlama,
  // ReadDecoderBasics (decoder_kit.h): intermediate_size required, zero heads or head_dim refused.
  kKit,
};

enum class MlpForm : uint8_t {
  kGated,        // mlp.{gate,up,down}_proj
  kFusedGateUp,  // mlp.gate_up_proj [2I, H], mlp.down_proj (glm4)
  kPlain,        // mlp.{up,down}_proj (apertus)
};

enum class QkNorm : uint8_t {
  kNone,
  kPerHead,    // RMSNorm [head_dim] named q_norm_name / k_norm_name (qwen3, gemma3, exaone4)
  kWhole,      // RMSNorm over the whole projection: q [heads x head_dim], k [kv x head_dim] (olmo2)
  kCohere,     // when "use_qk_norm": q_norm.weight [heads, head_dim], k_norm.weight [kv, head_dim]
  kMiniMaxM2,  // "use_qk_norm" (default true) and "qk_norm_type": per_layer (whole) or per_head
  kPerHeadFlag,  // kPerHead when "use_qk_norm" (default true) (hunyuan_v1_moe)
};

enum class SlidingRuleKind : uint8_t {
  kNone,            // no sliding layers; "layer_types" not read
  kNoneCheckTypes,  // no sliding layers; a malformed "layer_types" is still an error
  kAll,             // every layer, when window_key is set (mistral, mixtral)
  // every layer, when window_key is set and below "max_position_embeddings" (a window at least
  // the context is full attention: phi3, phimoe)
  kBelowContext,
  kEven,            // "layer_types", else even layers (gemma2)
  // "layer_types", else every pattern-th layer global: pattern from pattern_key (default
  // pattern_default), or pattern_default when pattern_key is empty.
  kPattern,
  kSmolLm3,         // "layer_types", else NoPE layers when "use_sliding_window" (SmolLM3Config)
  kExaone4,         // Exaone4Config: null window: none; "layer_types"; "sliding_window_pattern"
  kAfterMaxWindow,  // "use_sliding_window": layers >= "max_window_layers" (qwen2_moe)
  // Cohere2MoeConfig: "layer_types", else the first "first_k_dense_replace" layers every
  // "prefix_dense_sliding_window_pattern"-th global (default 1: all global), then the pattern
  // (pattern_key, default pattern_default) counted again from the first layer after them.
  kCohere2Moe,
  kLayerTypes,      // "layer_types" only; none without it (laguna)
};

enum class MoeLayout : uint8_t {
  kNone,
  // Every layer: block_sparse_moe.gate [E, H] and experts.N.{w1,w2,w3} of intermediate_size;
  // E from "num_local_experts" (mixtral, minimax_m2).
  kMixtral,
  // Sparse layers (not in "mlp_only_layers", (i + 1) % "decoder_sparse_step" == 0): mlp.gate and
  // mlp.experts.N.{gate,up,down}_proj of "moe_intermediate_size"; E from "num_experts"; with
  // shared_expert_key set and > 0, mlp.shared_expert.* and mlp.shared_expert_gate [1, H].
  kQwen,
  // Every layer, experts fused in 3-D weights: block_sparse_moe.input_linear [E, 2I, H],
  // output_linear [E, H, I], router.layer [E, H]; shared_mlp.{input,output}_linear when
  // shared_expert_key is set and > 0 (granitemoe, granitemoeshared).
  kGraniteFused,
  // Sparse layers by dense_layers: mlp.<router_name>.weight [E, H] (E from experts_key), the
  // routing bias (routed_bias), mlp.experts.N.{gate,up,down}_proj of moe_inter_key as the
  // checkpoints store them, and with shared_count_key > 0 mlp.shared_experts.{gate,up,down}_proj
  // of (expert width x count) (olmoe, afmoe, exaone_moe, hy_v3, cohere2_moe).
  kRouted,
  // Sparse layers by "mlp_layer_types" (default: first dense, rest sparse): mlp.gate [E, H],
  // mlp.experts.e_score_correction_bias [E], mlp.experts.N.{gate,up,down}_proj of
  // "moe_intermediate_size", mlp.shared_expert.* of shared_expert_key (laguna checkpoints).
  kLaguna,
  // Every layer: mlp.router [E, H] with bias, the experts fused in 3-D weights
  // experts.gate_up_proj [E, H, 2I] and down_proj [E, I, H] with gate_up_proj_bias [E, 2I] and
  // down_proj_bias [E, H]; E from "num_local_experts", top-k "num_experts_per_tok", else OpenAI's
  // "experts_per_token" (default 4). Under "quant_method": "mxfp4" (the released checkpoints,
  // transformers integrations/mxfp4.py) each weight is *_blocks uint8 [E, out, in / 32, 16] (two
  // fp4 values a byte, 32 a block) and *_scales uint8 [E, out, in / 32] (one E8M0 scale a block),
  // with H and I divisible by 32 (gpt_oss).
  kGptOss,
  // Ernie4_5_MoeConfig: sparse layers i with (i + 1) % "moe_layer_interval" == 0 and
  // "moe_layer_start_index" <= i <= "moe_layer_end_index" (-1: the last layer): mlp.gate [E, H]
  // and mlp.moe_statics.e_score_correction_bias [1, E], both float32 parameters
  // (_keep_in_fp32_modules_strict), mlp.experts.N.{gate,up,down}_proj of "moe_intermediate_size"
  // and with "moe_num_shared_experts" > 0 mlp.shared_experts of (that width x count), experts
  // biased with mlp_bias_key. E "moe_num_experts", top-k "moe_k"; absent keys take the class
  // defaults (64, 6, 1536, 2 shared, interval 1, start 1, end -1), each printed, as are an absent
  // "tie_word_embeddings" and bias_key (ernie4_5_moe).
  kErnie,
  // HunYuanMoEV1Config: every layer mlp.gate.wg [E, H] in float32, E experts
  // mlp.experts.N.{gate,up,down}_proj of W, and mlp.shared_mlp of intermediate_size x S (always
  // built); E "num_experts" and top-k "moe_topk" (default 1, printed), W "moe_intermediate_size"
  // (default intermediate_size), S "num_shared_expert" (default 1, not 0), each an integer or a
  // list with one per layer; the absent "tie_word_embeddings" printed (hunyuan_v1_moe).
  kHunYuan,
  // Step3p5Model (vLLM step3p5.py, the checkpoints' names): sparse layers those of
  // "moe_layers_enum" ("3,4,...,44"), else from "first_k_dense_replace" (default 1) on:
  // moe.gate [E, H], moe.router_bias [E] (float32), the routed experts packed per projection
  // moe.{gate,up}_proj [E, I, H] and moe.down_proj [E, H, I] (per expert, moe.experts.N.*, when
  // quantized), share_expert.{gate,up,down}_proj of "share_expert_dim" (0: none). E
  // "moe_num_experts", else "num_experts"; top-k "moe_top_k", else "num_experts_per_tok";
  // I "moe_intermediate_size" (step3p5, step3p7).
  kStep,
};

// kRouted: which layers are dense (a dense MLP of dense_inter_key, else intermediate_size).
enum class DenseLayers : uint8_t {
  kNone,           // every layer sparse (olmoe)
  kFirstK,         // the first dense_first_key layers (default dense_first_default) (afmoe)
  // "mlp_layer_types" ("dense"/"sparse" per layer), else "is_moe_layer" (a bool per layer, as
  // early EXAONE-MoE configs write it), else the first dense_first_key layers (default
  // dense_first_default; dense_first_key "" = always the default, as HYV3Config).
  kMlpLayerTypes,
};

// kRouted: the aux-loss-free routing bias [E], float32 in the checkpoints (_keep_in_fp32_modules).
enum class RoutedBias : uint8_t {
  kNone,
  kGateBuffer,   // mlp.gate.e_score_correction_bias, a persistent buffer (exaone_moe)
  kBlockBuffer,  // mlp.e_score_correction_bias, a persistent buffer of the MoE block (hy_v3)
  kExpertBias,   // mlp.expert_bias, an nn.Parameter without gradient (afmoe)
};

// An attention output gate beside q/k/v/o.
enum class AttnGate : uint8_t {
  kNone,
  // self_attn.g_proj [heads x LayerKinds::gate_per_head, H] (softplus gate) and, with
  // "swa_attention_sink_enabled", self_attn.sink [heads] on sliding layers (laguna).
  kLaguna,
  // self_attn.gate_proj [heads x head_dim, H] after the q/k norms, a sigmoid gate (afmoe).
  kAfmoe,
  // self_attn.g_proj [heads, H] after the q/k norms when "use_head_wise_attn_gate" (step3p5).
  kHeadWise,
};

enum class Mtp : uint8_t {
  kNone,
  // "num_nextn_predict_layers" layers model.mtp_layers.N (token_layernorm, hidden_layernorm,
  // input_proj [H, 2H], a decoder layer, final_layernorm), built and loaded (mimo).
  kMiMo,
  // "num_mtp_modules" with "use_mtp": not built by the class; an assumption says so (minimax_m2).
  kMiniMaxNote,
  // "num_nextn_predict_layers" (default 1, as vLLM exaone_moe_mtp.py reads it): mtp.fc [H, 2H],
  // mtp.layers.N (a dense decoder layer), mtp.norm, mtp.pre_fc_norm_{hidden,embedding};
  // stored, not loaded (ExaoneMoePreTrainedModel ignores r"mtp.*").
  kExaoneMoe,
  // "num_nextn_predict_layers" (default 0): model.layers.{L + k} (a sparse decoder layer) with
  // enorm, hnorm, eh_proj [H, 2H] and final_layernorm; stored, not loaded (HYV3PreTrainedModel
  // ignores them) (hy_v3).
  kHyV3,
  // "num_nextn_predict_layers" (default 0) after the task head: model.mtp_emb_norm.K,
  // model.mtp_hidden_norm.K, model.mtp_linear_proj.K [H, 2H] (mlp_bias_key) and model.mtp_block.K
  // (a dense decoder layer); stored, not loaded (_keys_to_ignore_on_load_unexpected = ["mtp"])
  // (ernie4_5_moe).
  kErnie,
  // "num_nextn_predict_layers" (default 0, at most 64) after the head: model.layers.{L + k} with
  // enorm, hnorm, eh_proj [H, 2H], shared_head.norm, shared_head.output [V, H] and a dense
  // decoder layer of full attention (vLLM step3p5_mtp.py); stored, not loaded by the causal LM.
  // Step3p5's assumptions (router dtypes, absent gate and sliding-head keys) follow them.
  kStep,
};

// Rotary buffers (non-persistent float32 inv_freq [rotary_dim / 2]) under BufferConvention.
enum class Rope : uint8_t {
  kModelLevel,        // model.rotary_emb.inv_freq in every version
  kPerLayer442,       // 4.42: one per attention module, inside the layer; else model-level
  kPerLayerCached442, // 4.42: as kPerLayer442 plus cos_cached/sin_cached [max_pos, head_dim]
  // 4.42 as LlamaModel: one per attention module after model.norm (plus one model-level with
  // "rope_scaling"); transformers >= 4.48 model-level (calibrated on accelerate_reference.jsonl).
  kLlama442,
  kLlamaCached442,    // as kLlama442 with cos/sin caches per layer and no rope_scaling extra
  kPerLayerType,      // model-level, one pair per layer type (PerLayerTypeRotary, laguna)
  // model-level only when "rope_parameters".rope_theta (or "rope_theta") is set: OlmoHybridModel
  // builds no rotary embedding for the released, NoPE checkpoints.
  kModelLevelIfTheta,
  // 4.42: one inv_freq [rotary width / 2] per attention module, after the layer's norms in the
  // state dict; else model-level (phi3).
  kPerLayerAfterNorms442,
  kNone,  // no rotary buffer: the checkpoint's names as vLLM loads them (step3p5)
};

// Lightning (linear) attention layers among the softmax ones (issue 30). A lightning layer's
// self_attn is qkv_proj [3 heads x head_dim, H], output_gate [heads x head_dim, H], RMSNorm norm
// [heads x head_dim] and out_proj [H, heads x head_dim]; its LayerInfo keeps a
// [heads, head_dim, head_dim] state in the model dtype (transformers' MiniMaxCache and vLLM's
// linear_attention_state_dtype) and no KV cache.
enum class Lightning : uint8_t {
  kNone,
  // transformers models/minimax/modular_minimax.py (MiniMaxConfig): "layer_types"
  // ("linear_attention" / "full_attention"), else odd layers lightning; each lightning module
  // also registers persistent decay buffers slope_rate [heads, 1, 1], query_decay and key_decay
  // [heads, block_size, 1], diagonal_decay [1, heads, block_size, block_size] ("block_size").
  kMiniMax,
  // MiniMax-M1 / Text-01 remote code modeling_minimax_m1.py: "attn_type_list" (0 lightning,
  // 1 softmax), one per layer, required; no buffers (the slopes are a plain attribute); a
  // "shared_intermediate_size" > 0 adds shared_mlp.{gate,up,down}_proj of intermediate_size and
  // coefficient [1, H] (MiniMaxM1DecoderLayer).
  kMiniMaxM1,
};

// Gated DeltaNet layers among the attention ones (issue 30); their LayerInfo keeps a conv state
// of 2 nk dk + nv dv channels and an [nv, dk, dv] recurrent state instead of a KV cache.
enum class DeltaNet : uint8_t {
  kNone,
  // transformers models/olmo_hybrid/modular_olmo_hybrid.py (OlmoHybridGatedDeltaNet):
  // "layer_types" "linear_attention" (default: layers i % 4 == 3 full, the last one when none is),
  // linear_attn.{q,k}_proj [nk dk, H], v_proj and g_proj [nv dv, H], a_proj and b_proj [nv, H],
  // o_proj [H, nv dv], depthwise conv1d [2 nk dk + nv dv, 1, K] without bias, A_log and dt_bias
  // [nv], o_norm [dv]; "linear_num_key_heads"/"linear_num_value_heads" (default heads),
  // "linear_key_head_dim" (0.75 H / nk), "linear_value_head_dim" (2 dk), "linear_conv_kernel_dim"
  // (4). Such a layer is a LlamaDecoderLayer: input_layernorm and post_attention_layernorm
  // instead of the spec's norms.
  kOlmoHybrid,
};

struct DecoderSpec {
  // Hyperparameters.
  DecoderBasics basics = DecoderBasics::kLlama;
  bool tie_default = false;                      // "tie_word_embeddings" default
  std::string_view act_key = "hidden_act";       // the activation's key and default
  std::string_view act_default = "silu";
  uint64_t head_dim_default = 0;                 // kLlama: the class's "head_dim" default; 0: H/heads
  std::string_view kv_heads_key = "";  // replaces "num_key_value_heads" when present (step3p5)
  std::string_view hp_norm = "rmsnorm";          // Hyperparameters::norm
  std::string_view note = "";                    // a fact for Model::notes
  // Without "torch_dtype": weights taken as bfloat16 (not float32) and this assumption printed.
  std::string_view bf16_without_dtype = "";
  bool norm_bias = false;  // every norm a LayerNorm with weight and bias, not an RMSNorm (phimoe)
  // Attention.
  std::string_view bias_key = "attention_bias";  // q/k/v (and o) biases
  bool bias_default = false;
  bool qkv_bias = false;                         // q/k/v always biased, o_proj never (qwen2)
  bool o_bias = true;                            // o_proj follows bias_key (glm4: never)
  std::string_view o_bias_key = "";              // o_proj's own flag (seed_oss)
  bool fused_qkv = false;  // self_attn.qkv_proj [(heads + 2 kv) x head_dim, H] for q/k/v (phi3)
  bool sinks = false;      // self_attn.sinks [heads] after o_proj, on every layer (gpt_oss)
  // Cross-layer attention (Tencent's hunyuan code): with "use_cla", a layer i with
  // i % "cla_share_factor" != 0 has no k_proj/v_proj and reuses the previous layer's KV cache.
  bool cla = false;
  QkNorm qk_norm = QkNorm::kNone;
  std::string_view q_norm_name = "q_norm", k_norm_name = "k_norm";
  SlidingRuleKind sliding = SlidingRuleKind::kNone;
  std::string_view window_key = "sliding_window";
  uint64_t window_default = 0;
  std::string_view pattern_key = "";
  uint64_t pattern_default = 0;
  Rope rope = Rope::kLlama442;
  double rotary_factor = 0;       // "partial_rotary_factor" default when it shapes inv_freq
  bool rope_local = false;        // also model.rotary_emb_local.inv_freq (gemma3)
  bool embed_scale = false;       // model.embed_tokens.embed_scale buffer (gemma3)
  // MLP.
  MlpForm mlp = MlpForm::kGated;
  std::string_view mlp_bias_key = "mlp_bias";    // the MLP's bias flag; "": never biased
  MoeLayout moe = MoeLayout::kNone;
  std::string_view routing_bias_key = "";        // kMixtral: e_score_correction_bias [E] (f32)
  std::string_view shared_expert_key = "";       // the shared expert's width
  bool moe_width_in_hp = false;  // kMixtral: hp.moe_intermediate_size = intermediate_size (phimoe)
  // Norms: the pre-attention one ("" none), those after the MLP in order, the final one.
  std::string_view input_norm = "input_layernorm";
  std::array<std::string_view, 3> after_mlp_norms = {"post_attention_layernorm", "", ""};
  bool norms_before_mlp = false;  // after_mlp_norms precede the MLP in the tensor order
  bool final_norm = true;
  std::string_view lm_bias_key = "";             // lm_head's bias flag (phimoe "lm_head_bias")
  Mtp mtp = Mtp::kNone;
  // kRouted MoE (their defaults leave every other layout as it is).
  std::string_view experts_key = "num_experts";
  std::string_view moe_inter_key = "moe_intermediate_size";  // the routed experts' width
  std::string_view router_name = "gate";                      // mlp.<router_name>.weight
  RoutedBias routed_bias = RoutedBias::kNone;
  std::string_view shared_count_key = "";                     // shared experts' count key
  DenseLayers dense_layers = DenseLayers::kNone;
  std::string_view dense_first_key = "";
  uint64_t dense_first_default = 0;
  std::string_view dense_inter_key = "";  // dense layers' width when not intermediate_size
  // Hybrid lightning attention (MiniMax-01 / M1).
  Lightning lightning = Lightning::kNone;
  bool router_f32 = false;                       // kMixtral: the router gate stored in float32
  std::string_view rotary_dim_key = "";          // the rotary width's key (default head_dim)
  // Per-layer query heads (q_proj, o_proj, gate widths and LayerInfo), and the output gate.
  std::string_view heads_per_layer_key = "";
  // Sliding layers' query heads (default num_attention_heads); "attention_other_setting"'s
  // num_attention_heads wins when present (step3p5).
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
extern const DecoderSpec kLlamaSpec, kMistralSpec, kQwen2Spec, kQwen3Spec, kQwen3MoeSpec,
    kGlm4Spec, kGemmaSpec, kGemma2Spec, kGemma3TextSpec;

// The registry rows of every DecoderSpec family (decoder_families.cc).
const std::vector<ArchitectureBuilder>& DecoderFamilyBuilders();

}  // namespace memfit::arch
