// Two MLA decoders a DecoderSpec cannot say (its attention is q/k/v_proj; MLA's tensors and its
// latent KV cache are mla_kit.h's), built from mla_kit.h's readers and emitter.
//
// MiniCPM3 (model_type "minicpm3", openbmb/MiniCPM3-4B): DeepSeek-V2's MLA (q_lora_rank 768,
// kv_lora_rank 256; "v_head_dim" defaults to hidden_size // num_attention_heads), a dense gated
// MLP ("mlp_bias"), RMSNorms input_layernorm / post_attention_layernorm / model.norm, tied
// embeddings by default. Its muP multipliers scale_emb, scale_depth and dim_model_base hold no
// tensors; transformers' MiniCPM3ScaledWordEmbedding keeps scale_emb as a non-persistent scalar
// buffer model.embed_tokens.embed_scale, and one model-level inv_freq of qk_rope_head_dim / 2
// (MiniCPM3Config sets head_dim = qk_rope_head_dim). Sources: transformers
// models/minicpm3/{configuration,modeling}_minicpm3.py, the remote code modeling_minicpm3.py of
// openbmb/MiniCPM3-4B, vLLM model_executor/models/minicpm3.py.
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

#include <cstdint>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/mla_families.h"
#include "model/arch/mla_kit.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

// After the layers: the final norm, one model-level inv_freq, the task head.
void MlaTail(ModelBuilder& b, const HfConfig& c, const BuildOptions& o, uint64_t rotary_dim) {
  b.RmsNorm("model.norm", b.model().hp.hidden_size);
  b.Buffer("model.rotary_emb.inv_freq", {rotary_dim / 2}, Dtype::kF32, false);
  TaskHead(b, c, o, "model.embed_tokens");
}

Result<Model> Done(ModelBuilder& b, const Quantization& q) {
  NoteQuantization(b, q);
  b.model().no_split_patterns = {"model.layers.*"};
  b.model().base_model_prefix = "model.";
  return b.Finish();
}

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

Result<Model> BuildMiniCpm3(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadMlaDecoderBasics(b, c, {.tie = true});  // MiniCPM3Config: tie_word_embeddings true
  // MiniCPM3Config: v_head_dim = hidden_size // num_attention_heads when null or absent.
  const uint64_t v_default = hp.num_attention_heads ? hp.hidden_size / hp.num_attention_heads : 0;
  const MlaDims d = ReadMlaDims(b, c, hp.num_attention_heads, v_default);
  const bool attn_bias = Get(b, c.BoolOr("attention_bias", false));
  const bool mlp_bias = Get(b, c.BoolOr("mlp_bias", false));
  Quantization q = ReadQuantization(b, c, o);
  CheckMlaDims(b, c, d);
  if (b.failed()) return b.Finish();
  SetMlaHyperparameters(hp, d);
  const uint64_t h = hp.hidden_size;
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  b.Buffer("model.embed_tokens.embed_scale", {}, Dtype::kF32, false);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    b.RmsNorm(l + ".input_layernorm", h);
    EmitMla(b, q, l + ".self_attn", d, attn_bias);
    QGatedMlp(b, q, l + ".mlp", h, hp.intermediate_size, mlp_bias);
    b.RmsNorm(l + ".post_attention_layernorm", h);
    LayerInfo info = MlaLayerInfo(hp, d);
    info.intermediate_size = hp.intermediate_size;
    hp.layers.push_back(info);
  }
  m.notes.push_back("MiniCPM3's scale_emb, scale_depth and dim_model_base are multipliers "
                    "without weights");
  MlaTail(b, c, o, d.rope);
  return Done(b, q);
}

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
  MlaTail(b, c, o, rotary);
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
  return Done(b, q);
}

}  // namespace memfit::arch
