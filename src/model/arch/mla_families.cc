// The MLA + routed-MoE families as MlaFamilySpec rows, one per model_type, each naming its source,
// built by BuildMla; MLA and the rows' layout are described in mla_kit.h. Parity with the builders
// the rows replaced: model_digest_test.cc. LongCat-Flash is hand-written below.

#include <cstdint>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/mla_families.h"
#include "model/arch/mla_kit.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"
#include "model/arch/table_row.h"

namespace memfit::arch {
namespace {

// DeepSeek-V2 (deepseek-ai modeling_deepseek.py of the V2 repos): MLA, dense MLPs in the first
// first_k_dense_replace layers and where layer % moe_layer_freq != 0, else routed experts plus
// shared_experts; a router of weight only. The checkpoints also store num_nextn_predict_layers
// multi-token-prediction layers after the last decoder layer, which transformers does not load.
constexpr MlaFamilySpec kDeepseekV2{.router_bias = MlaRouterBias::kNone};
// DeepSeek-V3 (deepseek-ai modeling_deepseek.py of the V3 repos,
// transformers/models/deepseek_v3/modeling_deepseek_v3.py; also kimi_k2, DeepseekV3ForCausalLM):
// V2's layout, the router's e_score_correction_bias [E] in float32 with "topk_method" noaux_tc.
// Its MTP layer (layer 61 of DeepSeek-V3: enorm, hnorm, eh_proj, its own embed_tokens and
// shared_head) is stored, not loaded; the stored dtypes (MTP eh_proj and shared_head in bfloat16)
// are confirmed by DeepSeek-R1's shard sizes (deepseek_test.cc).
constexpr MlaFamilySpec kDeepseekV3{};
// DeepSeek-V3.2 (transformers/models/deepseek_v32/modeling_deepseek_v32.py): V3 with DeepSeek
// sparse attention's lightning indexer on every attention.
constexpr MlaFamilySpec kDeepseekV32{.attention = MlaAttention::kDsa};
// GLM-5 (glm_moe_dsa; transformers/models/glm_moe_dsa/modular_glm_moe_dsa.py): V3.2's layout, the
// indexer on the layers "indexer_types" marks "full" (all by default), "mlp_layer_types"
// (GLM-5.2); its MTP layer stores no embed_tokens/shared_head.head (its FP8 release's
// modules_to_not_convert lists neither).
constexpr MlaFamilySpec kGlmMoeDsa{.attention = MlaAttention::kDsaGlm,
                                   .mtp = MlaMtp::kSharedEmbed};
// GLM-4.5/4.6/4.5-Air (glm4_moe; transformers/models/glm4_moe/modular_glm4_moe.py): V3's MoE
// layers, router and MTP layers around grouped-query attention instead of MLA (Glm4MoeConfig:
// head_dim 128, partial_rotary_factor 0.5; inv_freq [int(head_dim x factor) / 2]); MoE from layer
// first_k_dense_replace on, Glm4MoeTopkRouter's e_score_correction_bias always registered. Its MTP
// layer stores its own embed_tokens and shared_head.head as DeepSeek-V3's does (vLLM
// glm4_moe_mtp.py loads them; the Hub's safetensors totals, 110B for GLM-4.5-Air and 358B for
// GLM-4.5, count them).
constexpr MlaFamilySpec kGlm4Moe{.attention = MlaAttention::kGqa,
                                 .router_bias = MlaRouterBias::kAlways,
                                 .rope = MlaRope::kModelLevel, .rotary_factor = 0.5};
// GLM-4.7-Flash (glm4_moe_lite; transformers/models/glm4_moe_lite/modeling_glm4_moe_lite.py, vLLM
// model_executor/models/glm4_moe_lite_mtp.py; the tensor list of zai-org/GLM-4.7-Flash in
// mla_families_test.cc): V3's layout with MLA again (q_lora_rank 768, kv_lora_rank 512),
// "mlp_layer_types" defaulting to one dense layer then sparse ones, Glm4MoeLiteTopkRouter's
// float32 e_score_correction_bias always registered, one model-level inv_freq of qk_rope_head_dim
// x partial_rotary_factor (Glm4MoeLiteRotaryEmbedding; no remote-code per-layer caches: the class
// is transformers 5's), and an MTP layer (model.layers.47) with its own embed_tokens and
// shared_head.head, which the class ignores on load.
constexpr MlaFamilySpec kGlm4MoeLite{.first_dense_default = 1,
                                     .router_bias = MlaRouterBias::kAlways,
                                     .rope = MlaRope::kModelLevel, .rotary_factor = 1.0};
// Mistral 4 (mistral4, Mistral-Small-4-119B-2603; issue 30; transformers/models/mistral4/
// {modular,configuration}_mistral4.py): V3's MLA and MoE layers with a router of weight only
// (Mistral4TopkRouter: no e_score_correction_bias) and the routed experts fused as the Hub
// checkpoint stores them, mlp.experts.gate_up_proj [E, 2 x moe_intermediate_size, H] and
// down_proj [E, H, moe_intermediate_size] (convert_mistral4_weight_to_hf.py fuses the original
// per-expert w1/w3/w2; expert_kit.h for a quantized release).
constexpr MlaFamilySpec kMistral4{.router_bias = MlaRouterBias::kNone, .fused_experts = true};
// MiniCPM3 (minicpm3, openbmb/MiniCPM3-4B; transformers models/minicpm3/{configuration,modeling}_
// minicpm3.py, the remote code modeling_minicpm3.py of openbmb/MiniCPM3-4B, vLLM
// model_executor/models/minicpm3.py): DeepSeek-V2's MLA (q_lora_rank 768, kv_lora_rank 256;
// "v_head_dim" defaults to hidden_size // num_attention_heads), a dense gated MLP ("mlp_bias"),
// tied embeddings by default, no MoE and no MTP. Its muP multipliers scale_emb, scale_depth and
// dim_model_base hold no tensors; transformers' MiniCPM3ScaledWordEmbedding keeps scale_emb as a
// non-persistent scalar buffer model.embed_tokens.embed_scale, and one model-level inv_freq of
// qk_rope_head_dim / 2 (MiniCPM3Config sets head_dim = qk_rope_head_dim).
constexpr MlaFamilySpec kMiniCpm3{
    .tie_default = true, .v_from_hidden = true, .mlp_bias_key = "mlp_bias", .mtp = MlaMtp::kNone,
    .rope = MlaRope::kModelLevel, .embed_scale = true,
    .note = "MiniCPM3's scale_emb, scale_depth and dim_model_base are multipliers without weights"};

// LongCat-Flash is hand-written: its layers are pairs of attention sublayers around one shortcut
// MoE, its router and MTP module are named apart from every row, which a row cannot say.
//
// LongCat-Flash (model_type "longcat_flash", meituan-longcat/LongCat-Flash-Chat): "num_layers"
// layers of two MLA attention sublayers each (self_attn.{0,1}, input_layernorm.{0,1},
// post_attention_layernorm.{0,1}), two dense MLPs mlps.{0,1} of "ffn_hidden_size", and one
// shortcut MoE per layer read from the first sublayer: mlp.router.classifier [n_routed_experts +
// zero_expert_num, H] (bias with "router_bias"), mlp.router.e_score_correction_bias [same], and
// mlp.experts.N.{gate,up,down}_proj of "expert_ffn_hidden_size" for the n_routed_experts real
// experts only: the zero_expert_num zero-computation (identity) experts have router rows but no
// weights. Each sublayer's attention has its own cache (transformers sets num_hidden_layers =
// 2 x num_layers), so hp.layers lists the 2 x num_layers sublayers. The checkpoint also stores
// one MTP module that transformers ignores (r"model\.mtp.*"): model.mtp.embed_tokens,
// model.mtp.layers.0.{eh_proj [H, 2H], enorm.m, hnorm.m, input_layernorm, self_attn (one MLA),
// post_attention_layernorm, transformer_layer.mlp.{gate,up,down}_proj of ffn_hidden_size},
// model.mtp.norm. Sources: transformers models/longcat_flash/modeling_longcat_flash.py, vLLM
// model_executor/models/longcat_flash.py (the checkpoint's expert names, router dtype
// "router_dtype") and longcat_flash_mtp.py (the MTP names, one MTP layer).

struct LongcatMoe {
  uint64_t experts = 0;    // "n_routed_experts": experts with weights
  uint64_t router = 0;     // + "zero_expert_num": the router's rows
  uint64_t width = 0;      // "expert_ffn_hidden_size"
  bool router_bias = false;
  Dtype router_dtype = Dtype::kF32;
};

void LongcatRouterAndExperts(ModelBuilder& b, const Quantization& q, const std::string& l,
                             const LongcatMoe& e) {
  const uint64_t h = b.model().hp.hidden_size;
  const std::string r = l + ".mlp.router";
  b.ParamAs(r + ".classifier.weight", {e.router, h}, e.router_dtype);
  if (e.router_bias) b.ParamAs(r + ".classifier.bias", {e.router}, e.router_dtype);
  b.Buffer(r + ".e_score_correction_bias", {e.router}, Dtype::kF32, true);
  RepeatedModules(b, q, l + ".mlp.experts", e.experts, [&](const std::string& x) {
    QGatedMlp(b, q, x, h, e.width);
  });
}

// model.mtp.*: stored, not loaded by transformers.
void LongcatMtp(ModelBuilder& b, const Quantization& q, const MlaDims& d, uint64_t layers,
                bool attn_bias) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size;
  b.Embedding("model.mtp.embed_tokens", hp.vocab_size, h);
  for (uint64_t k = 0; k < layers && !b.failed(); ++k) {
    const std::string p = Layer("model.mtp.layers", k);
    QLinear(b, q, p + ".eh_proj", MulDims(b, 2, h, "2 x hidden_size"), h, false);
    b.RmsNorm(p + ".enorm.m", h);
    b.RmsNorm(p + ".hnorm.m", h);
    b.RmsNorm(p + ".input_layernorm", h);
    EmitMla(b, q, p + ".self_attn", d, attn_bias);
    b.RmsNorm(p + ".post_attention_layernorm", h);
    QGatedMlp(b, q, p + ".transformer_layer.mlp", h, hp.intermediate_size);
  }
  b.RmsNorm("model.mtp.norm", h);
}

}  // namespace

Result<Model> BuildDeepseekV3(const HfConfig& c, const BuildOptions& o) {
  return BuildMla(c, o, kDeepseekV3);
}
Result<Model> BuildGlm4Moe(const HfConfig& c, const BuildOptions& o) {
  return BuildMla(c, o, kGlm4Moe);
}

namespace {

Result<Model> BuildLongcatFlash(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  // LongcatFlashConfig: "num_layers" layers; "ffn_hidden_size" is its intermediate_size.
  ReadMlaDecoderBasics(b, c, {.layers = "num_layers", .intermediate = "ffn_hidden_size"});
  const MlaDims d = ReadMlaDims(b, c, hp.num_attention_heads);
  const bool attn_bias = Get(b, c.BoolOr("attention_bias", false));
  LongcatMoe e;
  e.experts = Get(b, c.Uint("n_routed_experts"));
  const uint64_t zero = Get(b, c.UintOr("zero_expert_num", 0));
  e.width = Get(b, c.Uint("expert_ffn_hidden_size"));
  e.router_bias = Get(b, c.BoolOr("router_bias", false));
  // vLLM's FlashConfig: the router runs (and is stored) in "router_dtype", float32 by default.
  e.router_dtype = Get(b, c.StringOr("router_dtype", "float32")) == "float32" ? Dtype::kF32
                                                                               : b.dtype();
  hp.experts_per_token = Get(b, c.UintOr("moe_topk", 0));
  // One MTP module: vLLM's LongCatMultiTokenPredictor builds exactly one.
  const uint64_t mtp = Get(b, c.UintOr("num_nextn_predict_layers", 1));
  // Rotary: LongcatFlashConfig's "head_dim" (64, the qk_rope_head_dim of the release).
  const uint64_t rotary = Get(b, c.UintOr("head_dim", d.rope));
  Quantization q = ReadQuantization(b, c, o);
  CheckMlaDims(b, c, d);
  if (b.failed()) return b.Finish();
  if (e.experts == 0 || e.width == 0 || zero > UINT64_MAX - e.experts) {
    return MakeError("{}: \"n_routed_experts\" and \"expert_ffn_hidden_size\" must be positive "
                     "and \"zero_expert_num\" small enough", c.where());
  }
  e.router = e.experts + zero;
  hp.num_experts = e.experts;
  hp.moe_intermediate_size = e.width;
  hp.num_mtp_layers = mtp;
  SetMlaHyperparameters(hp, d);
  const uint64_t h = hp.hidden_size, layers = hp.num_layers;
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    for (uint64_t s = 0; s < 2; ++s) {
      b.RmsNorm(Layer(l + ".input_layernorm", s), h);
      EmitMla(b, q, Layer(l + ".self_attn", s), d, attn_bias);
      b.RmsNorm(Layer(l + ".post_attention_layernorm", s), h);
      if (s == 0) LongcatRouterAndExperts(b, q, l, e);
      QGatedMlp(b, q, Layer(l + ".mlps", s), h, hp.intermediate_size);
      LayerInfo info = MlaLayerInfo(hp, d);
      info.moe = s == 0;  // the shortcut MoE reads the first sublayer's output
      info.intermediate_size = hp.intermediate_size;
      hp.layers.push_back(info);
    }
  }
  hp.num_layers = hp.layers.size();  // attention sublayers, as transformers counts its cache
  b.RmsNorm("model.norm", h);
  b.Buffer("model.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
  TaskHead(b, c, o, "model.embed_tokens");
  const size_t mtp_begin = m.tensors.size();
  if (mtp > 0 && !b.failed()) {
    LongcatMtp(b, q, d, mtp, attn_bias);
    if (!b.failed()) {
      const uint64_t bytes = MarkStoredOnly(m, mtp_begin);
      m.notes.push_back(fmt::format("{} multi-token-prediction module(s) (model.mtp.*, {} bytes) "
                                    "are stored in the checkpoint but not loaded by transformers",
                                    mtp, bytes));
    }
  }
  if (zero > 0) {
    m.notes.push_back(fmt::format("{} zero-computation experts: router rows, no weights", zero));
  }
  NoteQuantization(b, q);
  m.no_split_patterns = {"model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace

const std::vector<ArchitectureBuilder>& MlaFamilyBuilders() {
  static const std::vector<ArchitectureBuilder> kRows = {
      {"deepseek_v2", "", BuildRow<BuildMla, kDeepseekV2>, "deepseek"},
      {"deepseek_v3", "", BuildRow<BuildMla, kDeepseekV3>, "deepseek"},
      {"kimi_k2", "", BuildRow<BuildMla, kDeepseekV3>, "deepseek"},  // DeepseekV3ForCausalLM layout
      {"deepseek_v32", "", BuildRow<BuildMla, kDeepseekV32>, "deepseek"},
      {"glm_moe_dsa", "", BuildRow<BuildMla, kGlmMoeDsa>, "deepseek"},
      {"glm4_moe", "", BuildRow<BuildMla, kGlm4Moe>, "deepseek"},
      {"glm4_moe_lite", "", BuildRow<BuildMla, kGlm4MoeLite>, "deepseek"},
      {"mistral4", "", BuildRow<BuildMla, kMistral4>, "deepseek"},  // inside mistral3 too
      {"minicpm3", "", BuildRow<BuildMla, kMiniCpm3>, "minicpm3"},
      {"longcat_flash", "", BuildLongcatFlash, "longcat_flash"},
  };
  return kRows;
}

}  // namespace memfit::arch
