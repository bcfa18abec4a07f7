// The MLA + routed-MoE families as MlaFamilySpec rows (mla_kit.h), one per model_type, each naming
// its source, built by BuildMla; LongCat-Flash is hand-written below.

#include "model/arch/mla_families.h"

#include <algorithm>
#include <cstdint>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/mla_kit.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"
#include "model/arch/table_row.h"

namespace memfit::arch {
namespace {

// DeepSeek-V2 (deepseek-ai modeling_deepseek.py of the V2 repos): a router of weight only; the
// stored MTP layers are not loaded by transformers.
constexpr MlaFamilySpec kDeepseekV2{.router_bias = MlaRouterBias::kNone};
// DeepSeek-V3 (deepseek-ai modeling_deepseek.py of the V3 repos, transformers
// models/deepseek_v3/modeling_deepseek_v3.py; also kimi_k2): the noaux_tc router bias; the MTP
// layer's stored dtypes (eh_proj and shared_head in bfloat16) are confirmed by DeepSeek-R1's shard
// sizes (deepseek_test.cc).
constexpr MlaFamilySpec kDeepseekV3{};
// DeepSeek-V3.2 (transformers models/deepseek_v32/modeling_deepseek_v32.py): V3 with the indexer.
constexpr MlaFamilySpec kDeepseekV32{.attention = MlaAttention::kDsa};
// GLM-5 (glm_moe_dsa; transformers models/glm_moe_dsa/modular_glm_moe_dsa.py): V3.2 with the
// indexer on the "full" layers, "mlp_layer_types" (GLM-5.2); its MTP layer stores no
// embed_tokens/shared_head.head (its FP8 release's modules_to_not_convert lists neither).
constexpr MlaFamilySpec kGlmMoeDsa{.attention = MlaAttention::kDsaGlm, .mtp = MlaMtp::kSharedEmbed};
// GLM-4.5/4.6/4.5-Air (glm4_moe; transformers models/glm4_moe/modular_glm4_moe.py): V3's MoE and
// MTP layers around grouped-query attention (Glm4MoeConfig: head_dim 128, partial_rotary_factor
// 0.5), the router bias always registered; the MTP layer's own embed_tokens and shared_head.head
// are counted by the Hub's totals (110B GLM-4.5-Air, 358B GLM-4.5) and loaded by vLLM.
constexpr MlaFamilySpec kGlm4Moe{.attention = MlaAttention::kGqa,
                                 .router_bias = MlaRouterBias::kAlways,
                                 .rope = MlaRope::kModelLevel,
                                 .rotary_factor = 0.5};
// GLM-4.7-Flash (glm4_moe_lite; transformers models/glm4_moe_lite/modeling_glm4_moe_lite.py, vLLM
// glm4_moe_lite_mtp.py; zai-org/GLM-4.7-Flash's tensor list in mla_families_test.cc): V3 with one
// dense layer by default, the router bias always registered and one model-level inv_freq of
// qk_rope_head_dim x partial_rotary_factor (a transformers 5 class).
constexpr MlaFamilySpec kGlm4MoeLite{.first_dense_default = 1,
                                     .router_bias = MlaRouterBias::kAlways,
                                     .rope = MlaRope::kModelLevel,
                                     .rotary_factor = 1.0};
// Mistral 4 (mistral4, Mistral-Small-4-119B-2603; transformers models/mistral4/modular_mistral4.py,
// convert_mistral4_weight_to_hf.py): V3 with a router of weight only and the experts fused as the
// Hub checkpoint stores them (expert_kit.h).
constexpr MlaFamilySpec kMistral4{.router_bias = MlaRouterBias::kNone, .fused_experts = true};
// MiniCPM3 (minicpm3, openbmb/MiniCPM3-4B; transformers models/minicpm3/modeling_minicpm3.py, vLLM
// minicpm3.py): V2's MLA ("v_head_dim" default hidden_size // heads), a dense MLP biased with
// "mlp_bias", tied by default, no MoE or MTP; MiniCPM3ScaledWordEmbedding's scale_emb buffer and
// one model-level inv_freq of qk_rope_head_dim / 2.
constexpr MlaFamilySpec kMiniCpm3{
    .tie_default = true,
    .v_from_hidden = true,
    .mlp_bias_key = "mlp_bias",
    .mtp = MlaMtp::kNone,
    .rope = MlaRope::kModelLevel,
    .embed_scale = true,
    .note = "MiniCPM3's scale_emb, scale_depth and dim_model_base are multipliers without weights"};

// LongCat-Flash-Lite's n-gram embedding (longcat_flash_ngram; remote code
// modeling_longcat_ngram.py NgramEmbedding, vLLM longcat_flash_ngram.py): beside embed_tokens,
// k x (n - 1) tables (k "emb_split_num", n "emb_neighbor_num") model.ngram_embeddings.embedders.i
// [int(m + 2i + 1), H // (k (n - 1))], m = "ngram_vocab_size_ratio" x vocab_size, each with its
// nn.Linear post_projs.i [H, H // (k (n - 1))]. The tables are looked up, not multiplied: loaded
// parameters, never experts.
void LongcatNgramEmbeddings(ModelBuilder& b, const HfConfig& c, const Quantization& q) {
  constexpr uint64_t kMaxTables = 4096;  // the release has 12; more is not a config memfit reads
  const uint64_t h = b.model().hp.hidden_size, vocab = b.model().hp.vocab_size;
  const double ratio = Get(b, c.NumberOr("ngram_vocab_size_ratio", 0));
  const uint64_t n = Get(b, c.Uint("emb_neighbor_num"));
  const uint64_t k = Get(b, c.Uint("emb_split_num"));
  if (b.failed()) return;
  const double m = ratio * static_cast<double>(vocab);
  if (!(ratio > 0) || !(m <= static_cast<double>(kMaxConfigDimension))) {
    b.Fail(
        MakeError("{}: field \"ngram_vocab_size_ratio\" = {} must be positive, with ratio x "
                  "vocab_size at most 2^40",
                  c.where(), ratio));
    return;
  }
  if (n < 2 || n - 1 > kMaxTables) {
    b.Fail(MakeError("{}: field \"emb_neighbor_num\" = {} must be in [2, {}]", c.where(), n,
                     kMaxTables + 1));
    return;
  }
  if (k == 0 || k * (n - 1) > std::min(kMaxTables, h)) {
    b.Fail(
        MakeError("{}: field \"emb_split_num\" = {}: {} x (emb_neighbor_num - 1) tables must "
                  "be at least 1 and at most min({}, hidden_size)",
                  c.where(), k, k, kMaxTables));
    return;
  }
  const uint64_t tables = k * (n - 1), dim = h / tables;
  for (uint64_t i = 0; i < tables; ++i) {
    const auto rows = static_cast<uint64_t>(m + static_cast<double>(2 * i + 1));  // Python int()
    b.Embedding(Layer("model.ngram_embeddings.embedders", i), rows, dim);
    QLinear(b, q, Layer("model.ngram_embeddings.post_projs", i), dim, h, false);
  }
}

// Whether a LongCat-Flash row has the n-gram embedding (longcat_flash_ngram) or not.
struct LongcatSpec {
  bool ngram = false;
};
constexpr LongcatSpec kLongcatFlash{};
constexpr LongcatSpec kLongcatFlashNgram{.ngram = true};

// LongCat-Flash (longcat_flash; transformers models/longcat_flash/modeling_longcat_flash.py,
// vLLM longcat_flash.py and longcat_flash_mtp.py for the checkpoint's names), hand-written: its
// "num_layers" layers each hold two MLA sublayers (input_layernorm.{0,1}, self_attn.{0,1},
// post_attention_layernorm.{0,1}, dense mlps.{0,1} of "ffn_hidden_size") around one shortcut MoE
// read from the first: mlp.router.classifier [n_routed_experts + zero_expert_num, H] (bias with
// "router_bias"; vLLM stores it in "router_dtype"), mlp.router.e_score_correction_bias, and
// mlp.experts.N of "expert_ffn_hidden_size" for the real experts only (zero-computation experts
// have router rows but no weights). Each sublayer caches (transformers' num_hidden_layers = 2 x
// num_layers). The one MTP module transformers ignores: model.mtp.embed_tokens,
// model.mtp.layers.0.{eh_proj [H, 2H], enorm.m, hnorm.m, input_layernorm, self_attn,
// post_attention_layernorm, transformer_layer.mlp}, model.mtp.norm. LongCat-Flash-Lite
// (longcat_flash_ngram) is the same model with LongcatNgramEmbeddings (its remote code ignores
// model.mtp.* on load too; the release stores that module in model-auxiliary.safetensors).
Result<Model> BuildLongcatFlash(const HfConfig& c, const BuildOptions& o, const LongcatSpec& spec) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadMlaDecoderBasics(b, c, {.layers = "num_layers", .intermediate = "ffn_hidden_size"});
  const MlaDims d = ReadMlaDims(b, c, hp.num_attention_heads);
  const bool attn_bias = Get(b, c.BoolOr("attention_bias", false));
  const uint64_t experts = Get(b, c.Uint("n_routed_experts"));
  const uint64_t zero = Get(b, c.UintOr("zero_expert_num", 0));
  const uint64_t width = Get(b, c.Uint("expert_ffn_hidden_size"));
  const bool router_bias = Get(b, c.BoolOr("router_bias", false));
  const Dtype router_dtype =
      Get(b, c.StringOr("router_dtype", "float32")) == "float32" ? Dtype::kF32 : b.dtype();
  hp.experts_per_token = Get(b, c.UintOr("moe_topk", 0));
  const uint64_t mtp = Get(b, c.UintOr("num_nextn_predict_layers", 1));  // vLLM builds one
  const uint64_t rotary = Get(b, c.UintOr("head_dim", d.rope));          // LongcatFlashConfig: 64
  const Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  CheckNonZero(b, c, {{experts, "n_routed_experts"}, {width, "expert_ffn_hidden_size"}});
  if (b.failed()) return b.Finish();
  if (hp.num_layers > o.max_tensors) {  // each layer emits tensors: it would fail anyway, slowly
    return MakeError(
        "{}: \"num_layers\" = {} exceeds memfit's limit of {} tensors for a model built from "
        "config.json",
        c.where(), hp.num_layers, o.max_tensors);
  }
  if (zero > UINT64_MAX - experts) {
    return MakeError("{}: field \"zero_expert_num\" = {} is too large", c.where(), zero);
  }
  hp.num_experts = experts;
  hp.moe_intermediate_size = width;
  hp.num_mtp_layers = mtp;
  const uint64_t h = hp.hidden_size, layers = hp.num_layers;
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  if (spec.ngram) LongcatNgramEmbeddings(b, c, q);
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    for (uint64_t s = 0; s < 2; ++s) {
      b.RmsNorm(Layer(l + ".input_layernorm", s), h);
      EmitMla(b, q, Layer(l + ".self_attn", s), d, attn_bias);
      b.RmsNorm(Layer(l + ".post_attention_layernorm", s), h);
      if (s == 0) {
        const std::string r = l + ".mlp.router";
        b.ParamAs(r + ".classifier.weight", {experts + zero, h}, router_dtype);
        if (router_bias) b.ParamAs(r + ".classifier.bias", {experts + zero}, router_dtype);
        b.Buffer(r + ".e_score_correction_bias", {experts + zero}, Dtype::kF32, true);
        RepeatedModules(b, q, l + ".mlp.experts", experts,
                        [&](const std::string& x) { QGatedMlp(b, q, x, h, width); });
      }
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
    b.Embedding("model.mtp.embed_tokens", hp.vocab_size, h);
    for (uint64_t k = 0; k < mtp && !b.failed(); ++k) {
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
  MarkMtpStoredOnly(b, mtp_begin, mtp, "module(s) (model.mtp.*");
  if (zero > 0) {
    m.notes.push_back(fmt::format("{} zero-computation experts: router rows, no weights", zero));
  }
  return FinishDecoderAfterHead(b, q);
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
      {"longcat_flash", "", BuildRow<BuildLongcatFlash, kLongcatFlash>, "longcat_flash"},
      {"longcat_flash_ngram", "", BuildRow<BuildLongcatFlash, kLongcatFlashNgram>, "longcat_flash"},
  };
  return kRows;
}

Result<Model> BuildDeepseekV3(const HfConfig& c, const BuildOptions& o) {
  return BuildMla(c, o, kDeepseekV3);
}
Result<Model> BuildGlm4Moe(const HfConfig& c, const BuildOptions& o) {
  return BuildMla(c, o, kGlm4Moe);
}

}  // namespace memfit::arch
