// The decoder families that are a DecoderSpec row (decoder_spec.h), one per model_type, each
// naming its source. A row sets only what differs from the defaults: LlamaForCausalLM's layers
// ("attention_bias"/"mlp_bias", gated MLP, RMSNorms input_layernorm / post_attention_layernorm /
// model.norm) with one model-level rotary buffer (Rope::kLlama442 where 4.42 kept one per
// layer). Parity with the builders they replaced: model_digest_test.cc. Registered through
// DecoderFamilyBuilders() (registry.cc).

#include "model/arch/decoder_spec.h"
#include "model/arch/families.h"

namespace memfit::arch {

// --- Llama and the families transformers writes as its modular variants ----------------------
// transformers models/llama/modeling_llama.py (LlamaForCausalLM).
const DecoderSpec kLlamaSpec{.rope = Rope::kLlama442};
// models/mistral/modeling_mistral.py: "sliding_window" (when set) on every layer.
const DecoderSpec kMistralSpec{.sliding = SlidingRuleKind::kAll, .rope = Rope::kLlama442};
// models/qwen2/modeling_qwen2.py: q/k/v biased, o_proj not; 4.42 cached cos/sin per layer.
const DecoderSpec kQwen2Spec{.qkv_bias = true, .rope = Rope::kLlama442, .rope_cached = true};
// models/qwen3/modeling_qwen3.py: per-head q_norm/k_norm.
const DecoderSpec kQwen3Spec{.qk_norm = QkNorm::kPerHead, .rope = Rope::kLlama442};
// models/qwen3_moe/modeling_qwen3_moe.py: qwen3 attention, sparse layers of routed experts.
const DecoderSpec kQwen3MoeSpec{
    .qk_norm = QkNorm::kPerHead, .rope = Rope::kLlama442, .moe = MoeLayout::kQwen};
// models/glm4/modular_glm4.py (GLM-4-0414): biased q/k/v, fused gate_up_proj, four norms a
// layer, head_dim 128 and partial_rotary_factor 0.5 by default; one model-level inv_freq.
const DecoderSpec kGlm4Spec{.head_dim_default = 128,
                            .bias_default = true,
                            .o_bias = false,
                            .rotary_factor = 0.5,
                            .mlp = MlpForm::kFusedGateUp,
                            .after_mlp_norms = {"post_attention_layernorm",
                                                "post_self_attn_layernorm", "post_mlp_layernorm"}};

// --- Gemma: models/gemma{,2,3}/modeling_gemma*.py --------------------------------------------
// gemma: llama layout, tied, gelu_pytorch_tanh.
const DecoderSpec kGemmaSpec{.intermediate_required = true,
                             .tie_default = true,
                             .act_default = "gelu_pytorch_tanh",
                             .sliding = SlidingRuleKind::kNoneCheckTypes,
                             .rope = Rope::kPerLayer442,
                             .mlp_bias_key = ""};
// gemma2: pre/post feed-forward norms, even layers slide (window 4096).
const DecoderSpec kGemma2Spec{
    .intermediate_required = true,
    .tie_default = true,
    .act_key = "hidden_activation",
    .act_default = "gelu_pytorch_tanh",
    .sliding = SlidingRuleKind::kPattern,
    .window_default = 4096,
    .pattern_default = 2,
    .rope = Rope::kPerLayer442,
    .mlp_bias_key = "",
    .after_mlp_norms = {"post_attention_layernorm", "pre_feedforward_layernorm",
                        "post_feedforward_layernorm"}};
// gemma3_text: gemma2 plus per-head q/k norms, 5 sliding : 1 global ("sliding_window_pattern"),
// the embed_scale buffer, global and local rotary embeddings.
const DecoderSpec kGemma3TextSpec{
    .intermediate_required = true,
    .tie_default = true,
    .act_key = "hidden_activation",
    .act_default = "gelu_pytorch_tanh",
    .qk_norm = QkNorm::kPerHead,
    .sliding = SlidingRuleKind::kPattern,
    .window_default = 4096,
    .pattern_key = "sliding_window_pattern",
    .pattern_default = 6,
    .rope_local = true,
    .embed_scale = true,
    .mlp_bias_key = "",
    .after_mlp_norms = {"post_attention_layernorm", "pre_feedforward_layernorm",
                        "post_feedforward_layernorm"}};

namespace {

// models/mixtral/modeling_mixtral.py: block_sparse_moe on every layer, mistral's window.
constexpr DecoderSpec kMixtral{.sliding = SlidingRuleKind::kAll,
                               .rope = Rope::kLlama442,
                               .rope_cached = true,
                               .moe = MoeLayout::kMixtral};
// models/smollm3/modular_smollm3.py: tied by default, NoPE layers slide.
constexpr DecoderSpec kSmolLm3{.tie_default = true, .sliding = SlidingRuleKind::kSmolLm3};
// MiMo-7B, remote code modeling_mimo.py: qwen2 plus MTP layers model.mtp_layers.N.
constexpr DecoderSpec kMiMo{
    .qkv_bias = true, .rope = Rope::kLlama442, .rope_cached = true, .mtp = Mtp::kMiMo};
// MiniMax-M2, remote code modeling_minimax_m2.py (vLLM minimax_m2.py): mixtral's experts,
// "use_qk_norm" norms, "use_routing_bias" e_score_correction_bias; MTP modules not built.
constexpr DecoderSpec kMiniMaxM2{.qk_norm = QkNorm::kMiniMaxM2,
                                 .qk_norm_key = "use_qk_norm",
                                 .rope = Rope::kLlama442,
                                 .rope_cached = true,
                                 .moe = MoeLayout::kMixtral,
                                 .routing_bias_key = "use_routing_bias",
                                 .mtp = Mtp::kMiniMaxNote};
// models/seed_oss/modular_seed_oss.py: biased q/k/v, o_proj by "attention_out_bias".
constexpr DecoderSpec kSeedOss{
    .head_dim_default = 128, .bias_default = true, .o_bias_key = "attention_out_bias"};
// models/apertus/modular_apertus.py: xIELU, non-gated MLP, renamed norms, per-head q/k norms.
constexpr DecoderSpec kApertus{.act_default = "xielu",
                               .qk_norm = QkNorm::kPerHead,
                               .mlp = MlpForm::kPlain,
                               .input_norm = "attention_layernorm",
                               .after_mlp_norms = {"feedforward_layernorm", "", ""}};
// models/ernie4_5/modular_ernie4_5.py: "use_bias" for attention and MLP, tied by default.
constexpr DecoderSpec kErnie45{
    .tie_default = true, .bias_key = "use_bias", .mlp_bias_key = "use_bias"};
// models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py: query_layernorm / key_layernorm.
constexpr DecoderSpec kHunYuanDense{.head_dim_default = 128,
                                    .qk_norm = QkNorm::kPerHead,
                                    .q_norm_name = "query_layernorm",
                                    .k_norm_name = "key_layernorm"};
// InternLM (v1), remote code modeling_internlm.py: "bias" (default true) on q/k/v/o.
constexpr DecoderSpec kInternLm{.bias_key = "bias", .bias_default = true, .rope = Rope::kLlama442};

// --- Granite: models/granite{,moe,moeshared}/modeling_*.py; model-level rotary always ---------
constexpr DecoderSpec kGranite{.intermediate_required = true};
constexpr DecoderSpec kGraniteMoe{.intermediate_required = true, .moe = MoeLayout::kGraniteFused};
constexpr DecoderSpec kGraniteMoeShared{.intermediate_required = true,
                                        .moe = MoeLayout::kGraniteFused,
                                        .shared_expert_key = "shared_intermediate_size"};

// --- OLMo, Cohere, EXAONE 4: models/{olmo,olmo2,olmo3,cohere,cohere2,exaone4}/ ----------------
// olmo: parameter-free LayerNorms, no norm tensors at all.
constexpr DecoderSpec kOlmo{.intermediate_required = true,
                            .hp_norm = "layernorm",
                            .note = "OLMo's LayerNorms have no parameters",
                            .sliding = SlidingRuleKind::kNoneCheckTypes,
                            .rope = Rope::kPerLayer442,
                            .mlp_bias_key = "",
                            .input_norm = "",
                            .after_mlp_norms = {"", "", ""},
                            .final_norm = false};
// olmo2: no input norm, q/k norms over the whole projection, post-attention and
// post-feed-forward norms.
constexpr DecoderSpec kOlmo2{
    .intermediate_required = true,
    .qk_norm = QkNorm::kWhole,
    .sliding = SlidingRuleKind::kNoneCheckTypes,
    .mlp_bias_key = "",
    .input_norm = "",
    .after_mlp_norms = {"post_attention_layernorm", "post_feedforward_layernorm", ""}};
// olmo3: olmo2's tensors; "layer_types", else 3 sliding : 1 global, window 4096.
constexpr DecoderSpec kOlmo3{
    .intermediate_required = true,
    .qk_norm = QkNorm::kWhole,
    .sliding = SlidingRuleKind::kPattern,
    .window_default = 4096,
    .pattern_default = 4,
    .mlp_bias_key = "",
    .input_norm = "",
    .after_mlp_norms = {"post_attention_layernorm", "post_feedforward_layernorm", ""}};
// exaone4: olmo2's layer with per-head q/k norms; Exaone4Config's sliding layers.
constexpr DecoderSpec kExaone4{
    .intermediate_required = true,
    .qk_norm = QkNorm::kPerHead,
    .sliding = SlidingRuleKind::kExaone4,
    .window_default = 4096,
    .mlp_bias_key = "",
    .input_norm = "",
    .after_mlp_norms = {"post_attention_layernorm", "post_feedforward_layernorm", ""}};
// cohere: parallel attention and MLP after one weight-only LayerNorm, optional [heads, head_dim]
// q/k norms ("use_qk_norm"), tied.
constexpr DecoderSpec kCohere{.intermediate_required = true,
                              .tie_default = true,
                              .hp_norm = "layernorm",
                              .qk_norm = QkNorm::kCohere,
                              .qk_norm_key = "use_qk_norm",
                              .qk_norm_default = false,
                              .sliding = SlidingRuleKind::kNoneCheckTypes,
                              .rope = Rope::kPerLayer442,
                              .mlp_bias_key = "",
                              .after_mlp_norms = {"", "", ""}};
// cohere2: cohere's tensors without q/k norms, 3 sliding : 1 global.
constexpr DecoderSpec kCohere2{.intermediate_required = true,
                               .tie_default = true,
                               .hp_norm = "layernorm",
                               .sliding = SlidingRuleKind::kPattern,
                               .window_default = 4096,
                               .pattern_key = "sliding_window_pattern",
                               .pattern_default = 4,
                               .mlp_bias_key = "",
                               .after_mlp_norms = {"", "", ""}};

// --- Qwen2-MoE: models/qwen2_moe/modeling_qwen2_moe.py ---------------------------------------
// qwen2 attention; sparse layers with a shared expert and its sigmoid gate; sliding from
// "max_window_layers" on when "use_sliding_window".
constexpr DecoderSpec kQwen2Moe{.intermediate_required = true,
                                .qkv_bias = true,
                                .sliding = SlidingRuleKind::kAfterMaxWindow,
                                .rope = Rope::kPerLayer442,
                                .rope_cached = true,
                                .mlp_bias_key = "",
                                .moe = MoeLayout::kQwen,
                                .shared_expert_key = "shared_expert_intermediate_size"};

// --- Routed-expert MoE (issue 30): MoeLayout::kRouted, experts as the Hub checkpoints store them
// models/olmoe/modeling_olmoe.py (allenai/OLMoE-1B-7B-0924): q/k norms over the whole
// projection, every layer sparse: mlp.gate and experts of "intermediate_size".
constexpr DecoderSpec kOlmoe{.qk_norm = QkNorm::kWhole,
                             .mlp_bias_key = "",
                             .moe = MoeLayout::kRouted,
                             .moe_inter_key = "intermediate_size"};
// models/afmoe/modeling_afmoe.py (arcee-ai/Trinity-Nano/Mini; vLLM afmoe.py for the checkpoint
// names): per-head q/k norms and a sigmoid gate_proj on the attention output, four norms a
// layer, "num_dense_layers" dense layers first, then mlp.router.gate, mlp.expert_bias (f32),
// experts and shared experts; "layer_types", else every "global_attn_every_n_layers"-th layer
// global (full layers are NoPE), window 1024 by default.
constexpr DecoderSpec kAfmoe{
    .head_dim_default = 128,
    .bias_key = "",
    .qk_norm = QkNorm::kPerHead,
    .sliding = SlidingRuleKind::kPattern,
    .window_default = 1024,
    .pattern_key = "global_attn_every_n_layers",
    .pattern_default = 4,
    .mlp_bias_key = "",
    .moe = MoeLayout::kRouted,
    .after_mlp_norms = {"post_attention_layernorm", "pre_mlp_layernorm", "post_mlp_layernorm"},
    .router_name = "router.gate",
    .routed_bias = RoutedBias::kExpertBias,
    .shared_count_key = "num_shared_experts",
    .dense_layers = DenseLayers::kFirstK,
    .dense_first_key = "num_dense_layers",
    .dense_first_default = 1,
    .attn_gate = AttnGate::kAfmoe};
// models/exaone_moe/modular_exaone_moe.py (LGAI-EXAONE/K-EXAONE-236B-A23B): exaone4 attention
// in a pre-norm layer, DeepSeek-V3 routing (mlp.gate.e_score_correction_bias, f32), shared
// experts; "mlp_layer_types", else the first "first_k_dense_replace" (1) layers dense; one MTP
// layer stored as mtp.* (vLLM exaone_moe_mtp.py), not loaded.
constexpr DecoderSpec kExaoneMoe{.intermediate_required = true,
                                 .qk_norm = QkNorm::kPerHead,
                                 .sliding = SlidingRuleKind::kExaone4,
                                 .window_default = 4096,
                                 .mlp_bias_key = "",
                                 .moe = MoeLayout::kRouted,
                                 .mtp = Mtp::kExaoneMoe,
                                 .routed_bias = RoutedBias::kGateBuffer,
                                 .shared_count_key = "num_shared_experts",
                                 .dense_layers = DenseLayers::kMlpLayerTypes,
                                 .dense_first_key = "first_k_dense_replace",
                                 .dense_first_default = 1};
// models/hy_v3/modular_hy_v3.py (tencent/Hy3-preview): apertus attention (per-head q/k norms),
// "mlp_layer_types", else layer 0 dense; mlp.gate, mlp.e_score_correction_bias (f32), experts,
// shared experts (LlamaMLP: "mlp_bias"); NextN layers model.layers.{L+k} stored, not loaded.
// tencent/Hy3 and Hy3-preview's config.json name no dtype, yet their index stores BF16
// (total_size 597,572,342,272 = 2 x 298,786,140,416 + 4 x 15,360 f32 biases), and serving
// engines load them as bfloat16 (SGLang special-cases hy_v3): float32 would double the estimate.
constexpr DecoderSpec kHyV3{.head_dim_default = 128,
                            .bf16_without_dtype =
                                "config.json names no torch_dtype: HY-V3 weights assumed "
                                "bfloat16, as tencent/Hy3's checkpoint stores them",
                            .qk_norm = QkNorm::kPerHead,
                            .moe = MoeLayout::kRouted,
                            .mtp = Mtp::kHyV3,
                            .routed_bias = RoutedBias::kBlockBuffer,
                            .shared_count_key = "num_shared_experts",
                            .dense_layers = DenseLayers::kMlpLayerTypes,
                            .dense_first_default = 1};
// models/cohere2_moe/modular_cohere2_moe.py (CohereLabs/North-Mini-Code-1.0, Command A+):
// cohere2's parallel layer (one input norm: RMSNorm with "rms_norm_eps", else a weight-only
// LayerNorm), tied; experts and shared experts of "intermediate_size", dense prefix layers of
// "prefix_dense_intermediate_size"; Cohere2MoeConfig's sliding layers.
constexpr DecoderSpec kCohere2Moe{.tie_default = true,
                                  .head_dim_default = 128,
                                  .hp_norm = "layernorm",
                                  .sliding = SlidingRuleKind::kPattern,
                                  .window_default = 4096,
                                  .pattern_key = "sliding_window_pattern",
                                  .pattern_default = 4,
                                  .prefix_key = "first_k_dense_replace",
                                  .prefix_pattern_key = "prefix_dense_sliding_window_pattern",
                                  .mlp_bias_key = "",
                                  .moe = MoeLayout::kRouted,
                                  .after_mlp_norms = {"", "", ""},
                                  .moe_inter_key = "intermediate_size",
                                  .shared_count_key = "num_shared_experts",
                                  .dense_layers = DenseLayers::kMlpLayerTypes,
                                  .dense_first_key = "first_k_dense_replace",
                                  .dense_inter_key = "prefix_dense_intermediate_size"};
// --- MiniMax-01 / M1: lightning attention among softmax layers, mixtral's experts with a
// float32 router (vLLM models/minimax_text_01.py, MiniMax-M1's checkpoint); the residual
// multipliers are scalars, no tensors.
// transformers models/minimax/modular_minimax.py (MiniMaxForCausalLM): model-level rotary.
constexpr DecoderSpec kMiniMax{.sliding = SlidingRuleKind::kAll,
                               .rotary_factor = 1.0,
                               .moe = MoeLayout::kMixtral,
                               .lightning = Lightning::kMiniMax,
                               .router_f32 = true};
// MiniMax-M1 remote code modeling_minimax_m1.py (MiniMaxM1ForCausalLM; config
// MiniMaxAI/MiniMax-M1-80k): "attn_type_list", rotary over "rotary_dim" of head_dim. The same
// row serves MiniMax-Text-01's remote code (modeling_minimax_text_01.py, MiniMaxText01ForCausalLM,
// model_type "minimax_text_01"), whose modules and names are M1's (M1 was trained from it; vLLM
// loads both with models/minimax_text_01.py).
constexpr DecoderSpec kMiniMaxM1{.sliding = SlidingRuleKind::kAll,
                                 .rope = Rope::kLlama442,
                                 .rope_cached = true,
                                 .moe = MoeLayout::kMixtral,
                                 .lightning = Lightning::kMiniMaxM1,
                                 .router_f32 = true,
                                 .rotary_dim_key = "rotary_dim"};

// --- Phi-3: transformers models/phi3/modeling_phi3.py, models/phimoe/modeling_phimoe.py -------
// Both put "sliding_window" on every layer, a window at least the context being full attention.
// phi3 (Phi-3, Phi-3.5, Phi-4): fused qkv_proj and gate_up_proj, rotary over
// "partial_rotary_factor" (1.0) of head_dim.
constexpr DecoderSpec kPhi3{.intermediate_required = true,
                            .fused_qkv = true,
                            .sliding = SlidingRuleKind::kAll,
                            .window_below_context = true,
                            .rope = Rope::kPerLayerAfterNorms442,
                            .rotary_factor = 1.0,
                            .mlp = MlpForm::kFusedGateUp,
                            .mlp_bias_key = ""};
// phimoe (Phi-3.5-MoE): LayerNorms with biases, q/k/v/o biased by default, mixtral's
// block_sparse_moe (hp: experts of intermediate_size), "lm_head_bias"; model-level rotary.
constexpr DecoderSpec kPhiMoe{.intermediate_required = true,
                              .hp_norm = "layernorm",
                              .norm_bias = true,
                              .bias_default = true,
                              .sliding = SlidingRuleKind::kAll,
                              .window_below_context = true,
                              .mlp_bias_key = "",
                              .moe = MoeLayout::kMixtral,
                              .moe_width_in_hp = true,
                              .lm_bias_key = "lm_head_bias"};

// --- gpt-oss: transformers models/gpt_oss/modeling_gpt_oss.py (GptOssForCausalLM), ----------
// integrations/mxfp4.py and openai/gpt-oss-20b model.safetensors.index.json: biased q/k/v/o,
// per-head sinks, "layer_types", else even layers sliding (window 128), a biased router and
// fused experts (MoeLayout::kGptOss, mxfp4 in the releases), model-level rotary.
constexpr DecoderSpec kGptOss{
    .intermediate_required = true,
    .bf16_without_dtype =
        "config.json names no torch_dtype: gpt-oss weights assumed bfloat16, "
        "as OpenAI's checkpoints store them",
    .bias_default = true,
    .sinks = true,
    .sliding = SlidingRuleKind::kPattern,
    .window_default = 128,
    .pattern_default = 2,
    .mlp_bias_key = "",
    .moe = MoeLayout::kGptOss};

// --- ERNIE 4.5 MoE: transformers models/ernie4_5_moe/{modular,configuration}_ernie4_5_moe.py
// (01187e21, 001f85b3; Baidu's -PT checkpoints), vLLM models/ernie45_moe.py (moe_statics [1, E]):
// "use_bias" on q/k/v/o, the MLPs and lm_head; tied by default; the post-attention norm before
// the MLP; MTP modules stored after the head, not loaded.
constexpr DecoderSpec kErnie45Moe{.intermediate_required = true,
                                  .tie_default = true,
                                  .bias_key = "use_bias",
                                  .mlp_bias_key = "use_bias",
                                  .moe = MoeLayout::kErnie,
                                  .norms_before_mlp = true,
                                  .lm_bias_key = "use_bias",
                                  .mtp = Mtp::kErnie};

// --- Hunyuan MoE V1: transformers models/hunyuan_v1_moe/{modular,modeling,configuration}_
// hunyuan_v1_moe.py (3404f51e, f3f034d7, 008cd60e); Tencent-Hunyuan/Hunyuan-A13B
// models/modeling_hunyuan.py at df832ebc (CLA, HunYuanMLP), whose "hunyuan" configs share the
// row: per-head query_layernorm / key_layernorm, cross-layer attention (Tencent's code only), the
// post-attention norm before the MoE, untied.
constexpr DecoderSpec kHunYuanMoe{.intermediate_required = true,
                                  .cla = true,
                                  .qk_norm = QkNorm::kPerHead,
                                  .qk_norm_key = "use_qk_norm",
                                  .q_norm_name = "query_layernorm",
                                  .k_norm_name = "key_layernorm",
                                  .mlp_bias_key = "",
                                  .moe = MoeLayout::kHunYuan,
                                  .norms_before_mlp = true};

// --- Step-3.5-Flash / Step-3.7-Flash text model (Step3p5ForCausalLM, Step3p7FlashForCausalLM),
// names as the checkpoints store them (vLLM step3p5.py, step3p5_mtp.py): "num_attention_groups"
// KV heads, per-head q/k norms, the head-wise gate, sliding "layer_types" with their own head
// count, the post-attention norm before the MLP, no rotary buffer.
constexpr DecoderSpec kStep3p5{.intermediate_required = true,
                               .kv_heads_key = "num_attention_groups",
                               .bias_key = "",
                               .qk_norm = QkNorm::kPerHead,
                               .sliding = SlidingRuleKind::kPattern,
                               .pattern_default = 1,
                               .rope = Rope::kNone,
                               .mlp_bias_key = "",
                               .moe = MoeLayout::kStep,
                               .norms_before_mlp = true,
                               .mtp = Mtp::kStep,
                               .sliding_heads_key = "swa_num_attention_heads",
                               .attn_gate = AttnGate::kHeadWise};

// --- Laguna: transformers models/laguna/modular_laguna.py (LagunaForCausalLM; config
// poolside/Laguna-XS.2), names as stored and loaded by vLLM models/laguna.py --------------------
// Per-layer query heads ("num_attention_heads_per_layer"), per-head q/k norms, a softplus
// output gate g_proj, sliding "layer_types" (window 512), dense or sparse "mlp_layer_types",
// sigmoid router with e_score_correction_bias and one shared expert; rotary per layer type.
constexpr DecoderSpec kLaguna{.head_dim_default = 128,
                              .qk_norm = QkNorm::kPerHead,
                              .sliding = SlidingRuleKind::kPattern,
                              .window_default = 512,
                              .pattern_default = 1,
                              .rope = Rope::kPerLayerType,
                              .mlp_bias_key = "",
                              .moe = MoeLayout::kLaguna,
                              .shared_expert_key = "shared_expert_intermediate_size",
                              .heads_per_layer_key = "num_attention_heads_per_layer",
                              .attn_gate = AttnGate::kLaguna};

// --- OLMo Hybrid: transformers models/olmo_hybrid/modular_olmo_hybrid.py (OlmoHybridForCausalLM;
// config allenai/Olmo-Hybrid-7B): olmo3's attention layers (no input norm, q/k norms over the
// whole projection, post-attention and post-feed-forward norms) between gated DeltaNet layers;
// no rotary buffer without a rope_theta (the released checkpoints are NoPE).
constexpr DecoderSpec kOlmoHybrid{
    .intermediate_required = true,
    .qk_norm = QkNorm::kWhole,
    .sliding = SlidingRuleKind::kNoneCheckTypes,
    .rope = Rope::kModelLevelIfTheta,
    .mlp_bias_key = "",
    .input_norm = "",
    .after_mlp_norms = {"post_attention_layernorm", "post_feedforward_layernorm", ""},
    .delta_net = DeltaNet::kOlmoHybrid};

}  // namespace

// Phi-4-multimodal's text model (phi4mm.cc).
Result<Model> BuildPhi3(const HfConfig& config, const BuildOptions& options) {
  return BuildDecoder(config, options, kPhi3);
}

const std::vector<ArchitectureBuilder>& DecoderFamilyBuilders() {
  static const std::vector<ArchitectureBuilder> kRows = {
      {"llama", "", BuildSpec<kLlamaSpec>, "llama"},
      {"mistral", "", BuildSpec<kMistralSpec>, "mistral"},
      // Ministral3ForCausalLM (transformers models/ministral3/modular_ministral3.py): Mistral's
      // modules, a position-dependent query scale with no weights of its own. Ministral 3,
      // Devstral 2 and Devstral Small 2 (also as the text model of mistral3).
      {"ministral3", "", BuildSpec<kMistralSpec>, "mistral"},
      {"mixtral", "", BuildSpec<kMixtral>, "mixtral"},
      {"qwen2", "", BuildSpec<kQwen2Spec>, "qwen2"},
      {"qwen3", "", BuildSpec<kQwen3Spec>, "qwen3"},
      {"qwen3_moe", "", BuildSpec<kQwen3MoeSpec>, "qwen3_moe"},
      {"smollm3", "", BuildSpec<kSmolLm3>, "llama"},
      {"mimo", "", BuildSpec<kMiMo>, "qwen2"},
      {"minimax_m2", "", BuildSpec<kMiniMaxM2>, "mixtral"},
      {"glm4", "", BuildSpec<kGlm4Spec>, "glm4"},
      {"seed_oss", "", BuildSpec<kSeedOss>, "llama"},
      {"apertus", "", BuildSpec<kApertus>, "llama"},
      {"ernie4_5", "", BuildSpec<kErnie45>, "llama"},
      {"hunyuan_v1_dense", "", BuildSpec<kHunYuanDense>, "llama"},
      {"internlm", "", BuildSpec<kInternLm>, "llama"},
      {"gemma", "", BuildSpec<kGemmaSpec>, "gemma"},
      {"gemma2", "", BuildSpec<kGemma2Spec>, "gemma"},
      {"gemma3_text", "", BuildSpec<kGemma3TextSpec>, "gemma"},
      {"granite", "", BuildSpec<kGranite>, "granite"},
      {"granitemoe", "", BuildSpec<kGraniteMoe>, "granite"},
      {"granitemoeshared", "", BuildSpec<kGraniteMoeShared>, "granite"},
      {"olmo", "", BuildSpec<kOlmo>, "olmo"},
      {"olmo2", "", BuildSpec<kOlmo2>, "olmo"},
      {"olmo3", "", BuildSpec<kOlmo3>, "olmo"},
      {"exaone4", "", BuildSpec<kExaone4>, "olmo"},
      {"cohere", "", BuildSpec<kCohere>, "cohere"},
      {"cohere2", "", BuildSpec<kCohere2>, "cohere"},
      {"qwen2_moe", "", BuildSpec<kQwen2Moe>, "qwen2_moe"},
      {"olmoe", "", BuildSpec<kOlmoe>, "olmo"},
      {"afmoe", "", BuildSpec<kAfmoe>, "afmoe"},
      {"exaone_moe", "", BuildSpec<kExaoneMoe>, "olmo"},
      {"hy_v3", "", BuildSpec<kHyV3>, "hunyuan_moe"},
      {"cohere2_moe", "", BuildSpec<kCohere2Moe>, "cohere"},
      {"minimax", "", BuildSpec<kMiniMax>, "minimax"},
      {"minimax_m1", "", BuildSpec<kMiniMaxM1>, "minimax"},
      {"minimax_text_01", "", BuildSpec<kMiniMaxM1>, "minimax"},
      {"laguna", "", BuildSpec<kLaguna>, "laguna"},
      {"olmo_hybrid", "", BuildSpec<kOlmoHybrid>, "olmo"},
      {"phi3", "", BuildSpec<kPhi3>, "phi3"},
      {"phimoe", "", BuildSpec<kPhiMoe>, "phi3"},
      {"gpt_oss", "", BuildSpec<kGptOss>, "gpt_oss"},
      {"ernie4_5_moe", "", BuildSpec<kErnie45Moe>, "ernie4_5_moe"},
      {"step3p5", "", BuildSpec<kStep3p5>, "step3p7"},
      {"step3p7", "", BuildSpec<kStep3p5>, "step3p7"},
      {"hunyuan_v1_moe", "", BuildSpec<kHunYuanMoe>, "hunyuan_moe"},
      // Tencent's remote-code config of Hunyuan-A13B (GitHub Tencent-Hunyuan/Hunyuan-A13B).
      {"hunyuan", "HunYuanMoEV1ForCausalLM", BuildSpec<kHunYuanMoe>, "hunyuan_moe"},
  };
  return kRows;
}

}  // namespace memfit::arch
