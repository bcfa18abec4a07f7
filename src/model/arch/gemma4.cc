// Gemma 4: gemma4 (Gemma4ForConditionalGeneration: model.language_model, model.vision_tower,
// model.embed_vision) and gemma4_text (Gemma4ForCausalLM: model.*). Text layers as
// Gemma4TextDecoderLayer registers them: full layers of "global_head_dim" (with
// "attention_k_eq_v" no v_proj and "num_global_key_value_heads"), no k/v on the last
// "num_kv_shared_layers" layers (a double-wide MLP there with "use_double_wide_mlp"), a
// persistent layer_scalar, the "enable_moe_block" router, fused experts and norms, and per-layer
// embeddings ("hidden_size_per_layer_input"); tied lm_head. The vision tower's linears are
// Gemma4ClippableLinear (clip buffers with "use_clipped_linears"); the audio tower
// (Gemma4AudioModel, "audio_config") and embed_audio as AudioTower says. ModelOpt NVFP4 releases:
// every nn.Linear outside "ignore" as quantization.h stores it, the fused experts per expert
// (expert_kit.h). Source: transformers models/gemma4/modeling_gemma4.py.

#include <fmt/format.h>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/expert_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

// nn.Linear(in, out) without bias inside a Gemma4ClippableLinear.
void Clippable(ModelBuilder& b, const Quantization& q, const std::string& prefix, uint64_t in,
               uint64_t out, bool clip) {
  QLinear(b, q, prefix + ".linear", in, out, false);
  if (!clip) return;
  for (const char* n : {"input_min", "input_max", "output_min", "output_max"}) {
    b.Buffer(prefix + "." + n, {}, b.dtype(), true);
  }
}

void VisionTower(ModelBuilder& b, const Quantization& q, const HfConfig& v, uint64_t text_hidden) {
  const uint64_t h = Get(b, v.Uint("hidden_size"));
  const uint64_t layers = Get(b, v.Uint("num_hidden_layers"));
  const uint64_t heads = Get(b, v.Uint("num_attention_heads"));
  const uint64_t kv_heads = Get(b, v.UintOr("num_key_value_heads", heads));
  const uint64_t inter = Get(b, v.Uint("intermediate_size"));
  const uint64_t patch = Get(b, v.Uint("patch_size"));
  const uint64_t positions = Get(b, v.Uint("position_embedding_size"));
  const bool clip = Get(b, v.BoolOr("use_clipped_linears", false));
  const bool standardize = Get(b, v.BoolOr("standardize", false));
  uint64_t hd = 0;
  if (!b.failed()) {
    hd = v.Has("head_dim") ? Get(b, v.Uint("head_dim"))
                           : DivideExact(b, v, h, "hidden_size", heads, "num_attention_heads");
  }
  if (b.failed()) return;
  const uint64_t q_width = MulDims(b, heads, hd, "vision num_attention_heads x head_dim");
  const uint64_t kv_width = MulDims(b, kv_heads, hd, "vision num_key_value_heads x head_dim");
  const std::string t = "model.vision_tower";
  b.SetComponent("vision_tower");
  QLinear(b, q, t + ".patch_embedder.input_proj",
          MulDims(b, 3, MulDims(b, patch, patch, "patch^2"), "3 x patch_size^2"), h, false);
  b.Param(t + ".patch_embedder.position_embedding_table", {2, positions, h});
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    const std::string l = Layer(t + ".encoder.layers", i);
    b.RmsNorm(l + ".input_layernorm", h);
    Clippable(b, q, l + ".self_attn.q_proj", h, q_width, clip);
    Clippable(b, q, l + ".self_attn.k_proj", h, kv_width, clip);
    Clippable(b, q, l + ".self_attn.v_proj", h, kv_width, clip);
    Clippable(b, q, l + ".self_attn.o_proj", q_width, h, clip);
    b.RmsNorm(l + ".self_attn.q_norm", hd);
    b.RmsNorm(l + ".self_attn.k_norm", hd);
    Clippable(b, q, l + ".mlp.gate_proj", h, inter, clip);
    Clippable(b, q, l + ".mlp.up_proj", h, inter, clip);
    Clippable(b, q, l + ".mlp.down_proj", inter, h, clip);
    b.RmsNorm(l + ".post_attention_layernorm", h);
    b.RmsNorm(l + ".pre_feedforward_layernorm", h);
    b.RmsNorm(l + ".post_feedforward_layernorm", h);
  }
  // Gemma4VisionEncoder.rotary_emb: inv_freq over half the head (one spatial axis), two copies.
  for (const char* n : {".encoder.rotary_emb.inv_freq", ".encoder.rotary_emb.original_inv_freq"}) {
    b.Buffer(t + n, {(hd / 2 + 1) / 2}, Dtype::kF32, false);
  }
  if (standardize) {  // register_buffer in Gemma4VisionModel: stored, not parameters
    b.Buffer(t + ".std_bias", {h}, b.dtype(), true);
    b.Buffer(t + ".std_scale", {h}, b.dtype(), true);
  }
  b.SetComponent("embed_vision");
  QLinear(b, q, "model.embed_vision.embedding_projection", h, text_hidden, false);
  b.SetComponent("language_model");
}

// Gemma4AudioModel (the Universal Speech Model conformer) and Gemma4Model.embed_audio, as
// transformers gemma4/modeling_gemma4.py builds them from Gemma4AudioConfig (its defaults are
// those of google/gemma-4-e2b-it): subsample_conv_projection.layer{0,1} (Conv2d 3x3 without bias,
// LayerNorm without bias), input_proj_linear [H, (channels[0] / 4) x channels[1]]; per layer
// feed_forward1/2 (ffw_layer_1 H -> 4H, ffw_layer_2, pre/post norms), self_attn (q/k/v/post
// H -> H, relative_k_proj, per_dim_scale [H / heads]), lconv1d (linear_start H -> 2H,
// linear_end, depthwise Conv1d [H, 1, kernel], two norms), norm_pre_attn/norm_post_attn/norm_out;
// output_proj [output_proj_dims, H] with bias. Every Gemma4ClippableLinear carries four scalar
// buffers with "use_clipped_linears" (default true). embed_audio: embedding_projection
// [text hidden, output_proj_dims] (its pre-projection norm has no weight).
void AudioTower(ModelBuilder& b, const Quantization& q, const HfConfig& a, uint64_t text_hidden) {
  const uint64_t h = Get(b, a.UintOr("hidden_size", 1024));
  const uint64_t layers = Get(b, a.UintOr("num_hidden_layers", 12));
  const uint64_t heads = Get(b, a.UintOr("num_attention_heads", 8));
  const uint64_t kernel = Get(b, a.UintOr("conv_kernel_size", 5));
  const uint64_t out = Get(b, a.UintOr("output_proj_dims", 1536));
  const bool clip = Get(b, a.BoolOr("use_clipped_linears", true));
  const std::vector<uint64_t> ch = UintList(b, a, "subsampling_conv_channels", {128, 32}, 2);
  if (b.failed()) return;
  if (ch.size() != 2 || !CheckNonZero(b, a, {{h, "hidden_size"}, {kernel, "conv_kernel_size"}})) {
    if (!b.failed()) {
      b.Fail(MakeError("{}: \"subsampling_conv_channels\" must hold two integers", a.where()));
    }
    return;
  }
  const uint64_t hd = DivideExact(b, a, h, "hidden_size", heads, "num_attention_heads");
  const uint64_t h4 = MulDims(b, 4, h, "4 x audio hidden_size");
  const uint64_t h2 = MulDims(b, 2, h, "2 x audio hidden_size");
  const uint64_t proj_in = MulDims(b, ch[0] / 4, ch[1], "subsampling_conv_channels");
  if (b.failed()) return;
  const std::string t = "model.audio_tower";
  b.SetComponent("audio_tower");
  for (uint64_t i = 0; i < 2; ++i) {
    const std::string l = t + ".subsample_conv_projection.layer" + std::to_string(i);
    b.Conv(l + ".conv", i == 0 ? 1 : ch[0], ch[i], {3, 3}, false);
    b.LayerNorm(l + ".norm", ch[i], false);
  }
  QLinear(b, q, t + ".subsample_conv_projection.input_proj_linear", proj_in, h, false);
  b.Buffer(t + ".rel_pos_enc.inv_timescales", {1, 1, h / 2}, Dtype::kF32, false);
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    const std::string l = Layer(t + ".layers", i);
    for (const char* ff : {".feed_forward1", ".feed_forward2"}) {
      Clippable(b, q, l + ff + ".ffw_layer_1", h, h4, clip);
      Clippable(b, q, l + ff + ".ffw_layer_2", h4, h, clip);
      b.RmsNorm(l + ff + ".pre_layer_norm", h);
      b.RmsNorm(l + ff + ".post_layer_norm", h);
    }
    for (const char* p : {".q_proj", ".k_proj", ".v_proj", ".post"}) {
      Clippable(b, q, l + ".self_attn" + p, h, h, clip);
    }
    QLinear(b, q, l + ".self_attn.relative_k_proj", h, h, false);
    b.Param(l + ".self_attn.per_dim_scale", {hd});
    b.Buffer(l + ".self_attn.softcap", {}, Dtype::kF32, false);
    Clippable(b, q, l + ".lconv1d.linear_start", h, h2, clip);
    Clippable(b, q, l + ".lconv1d.linear_end", h, h, clip);
    b.Conv(l + ".lconv1d.depthwise_conv1d", h, h, {kernel}, false, h);
    b.RmsNorm(l + ".lconv1d.pre_layer_norm", h);
    b.RmsNorm(l + ".lconv1d.conv_norm", h);
    for (const char* n : {".norm_pre_attn", ".norm_post_attn", ".norm_out"}) b.RmsNorm(l + n, h);
  }
  QLinear(b, q, t + ".output_proj", h, out, true);
  b.SetComponent("embed_audio");
  QLinear(b, q, "model.embed_audio.embedding_projection", out, text_hidden, false);
  b.SetComponent("language_model");
}

struct Gemma4TextDims {
  uint64_t global_hd = 0, global_kv = 0, window = 0, shared_from = 0, per_layer = 0;
  uint64_t moe_inter = 0;
  bool k_eq_v = false, double_wide = false, moe = false, any_shared = false;
};

// One decoder layer; returns its LayerInfo. A KV-shared layer (the last "num_kv_shared_layers")
// has no k/v modules in transformers (Gemma4TextAttention), but the released checkpoints still
// store its k_proj, v_proj and k_norm: they are emitted stored, not loaded, their bytes added to
// `unloaded_bytes`. (google/gemma-4-E2B-it and E4B-it: the Hub's totals, 5,123,178,051 and
// 7,996,156,490 elements without their 928 scalars, and E4B's 2,130 tensors, hold them.)
LayerInfo Gemma4TextLayer(ModelBuilder& b, const Quantization& q, const std::string& l, uint64_t i,
                          bool sliding, const Gemma4TextDims& d, uint64_t& unloaded_bytes) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size, nh = hp.num_attention_heads;
  const bool full = !sliding;
  const uint64_t hd = full && d.global_hd > 0 ? d.global_hd : hp.head_dim;
  const bool k_eq_v = d.k_eq_v && full;
  const uint64_t nkv = k_eq_v ? d.global_kv : hp.num_kv_heads;
  const bool shared = d.any_shared && i >= d.shared_from;
  const bool wide = d.double_wide && shared && d.shared_from > 0;  // Gemma4TextMLP's rule
  const uint64_t inter = hp.intermediate_size * (wide ? 2 : 1);
  const uint64_t q_width = MulDims(b, nh, hd, "num_attention_heads x head_dim");
  b.RmsNorm(l + ".input_layernorm", h);
  QLinear(b, q, l + ".self_attn.q_proj", h, q_width, false);
  b.RmsNorm(l + ".self_attn.q_norm", hd);
  const size_t kv_first = b.model().tensors.size();
  b.RmsNorm(l + ".self_attn.k_norm", hd);
  const uint64_t kv_width = MulDims(b, nkv, hd, "key_value_heads x head_dim");
  QLinear(b, q, l + ".self_attn.k_proj", h, kv_width, false);
  if (!k_eq_v) QLinear(b, q, l + ".self_attn.v_proj", h, kv_width, false);
  if (shared) unloaded_bytes += MarkStoredOnly(b.model(), kv_first);
  QLinear(b, q, l + ".self_attn.o_proj", q_width, h, false);
  QGatedMlp(b, q, l + ".mlp", h, inter);
  b.RmsNorm(l + ".post_attention_layernorm", h);
  b.RmsNorm(l + ".pre_feedforward_layernorm", h);
  b.RmsNorm(l + ".post_feedforward_layernorm", h);
  b.Buffer(l + ".layer_scalar", {1}, b.dtype(), true);
  if (d.per_layer > 0) {
    QLinear(b, q, l + ".per_layer_input_gate", h, d.per_layer, false);
    QLinear(b, q, l + ".per_layer_projection", d.per_layer, h, false);
    b.RmsNorm(l + ".post_per_layer_input_norm", h);
  }
  if (d.moe) {
    QLinear(b, q, l + ".router.proj", h, hp.num_experts, false);
    b.Param(l + ".router.scale", {h});
    b.Param(l + ".router.per_expert_scale", {hp.num_experts});
    FusedExperts(
        b, q,
        {.path = l + ".experts", .experts = hp.num_experts, .hidden = h, .width = d.moe_inter});
    b.RmsNorm(l + ".post_feedforward_layernorm_1", h);
    b.RmsNorm(l + ".post_feedforward_layernorm_2", h);
    b.RmsNorm(l + ".pre_feedforward_layernorm_2", h);
  }
  LayerInfo info = AttentionInfo(hp, sliding, d.window);
  info.num_kv_heads = nkv;
  info.head_dim_k = info.head_dim_v = hd;
  info.k_eq_v = k_eq_v;
  info.kv_shared = shared;
  info.moe = d.moe;
  info.intermediate_size = inter;
  return info;
}

}  // namespace

Result<Model> BuildGemma4(const HfConfig& top, const BuildOptions& o, bool multimodal) {
  MEMFIT_ASSIGN_OR_RETURN(const HfConfig c, TextConfigOf(top, multimodal));
  ModelBuilder b(top);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadDecoderBasics(b, c,
                    {.tie = true,
                     .act_key = "hidden_activation",
                     .act_default = "gelu_pytorch_tanh",
                     .rms_gated = true});
  if (multimodal) hp.tie_word_embeddings = Get(b, top.BoolOr("tie_word_embeddings", true));
  Gemma4TextDims d;
  d.global_hd = Get(b, c.UintOr("global_head_dim", 0));
  d.k_eq_v = Get(b, c.BoolOr("attention_k_eq_v", false));
  d.global_kv = Get(b, d.k_eq_v ? c.Uint("num_global_key_value_heads")
                                : c.UintOr("num_global_key_value_heads", 0));
  d.window = Get(b, c.UintOr("sliding_window", 512));
  const uint64_t shared_layers = Get(b, c.UintOr("num_kv_shared_layers", 0));
  d.double_wide = Get(b, c.BoolOr("use_double_wide_mlp", false));
  d.per_layer = Get(b, c.UintOr("hidden_size_per_layer_input", 0));
  d.moe = Get(b, c.BoolOr("enable_moe_block", false));
  if (d.moe) {
    hp.num_experts = Get(b, c.Uint("num_experts"));
    hp.experts_per_token = Get(b, c.Uint("top_k_experts"));
    d.moe_inter = Get(b, c.Has("moe_intermediate_size") ? c.Uint("moe_intermediate_size")
                                                        : c.Uint("expert_intermediate_size"));
    hp.moe_intermediate_size = d.moe_inter;
  }
  const Quantization q = ReadQuantization(b, top, o);
  if (b.failed()) return b.Finish();
  if (d.k_eq_v && (d.global_kv == 0 || hp.num_attention_heads % d.global_kv != 0)) {
    return MakeError("{}: \"num_global_key_value_heads\" = {} must divide \"num_attention_heads\"",
                     c.where(), d.global_kv);
  }
  if (shared_layers > hp.num_layers) {
    return MakeError("{}: \"num_kv_shared_layers\" = {} exceeds \"num_hidden_layers\" = {}",
                     c.where(), shared_layers, hp.num_layers);
  }
  d.any_shared = shared_layers > 0;
  d.shared_from = hp.num_layers - shared_layers;
  std::vector<bool> sliding = LayerTypesOrEmpty(b, c, hp.num_layers);
  if (!b.failed() && sliding.empty()) {
    return MakeError("{}: field \"layer_types\" is missing", c.where());
  }
  if (b.failed()) return b.Finish();

  const std::string p = multimodal ? "model.language_model" : "model";
  const uint64_t h = hp.hidden_size;
  if (multimodal) b.SetComponent("language_model");
  b.Embedding(p + ".embed_tokens", hp.vocab_size, h);
  b.Buffer(p + ".embed_tokens.embed_scale", {}, Dtype::kF32, false);
  if (d.per_layer > 0) {
    const uint64_t width =
        MulDims(b, hp.num_layers, d.per_layer, "num_hidden_layers x hidden_size_per_layer_input");
    const uint64_t vocab = Get(b, c.UintOr("vocab_size_per_layer_input", hp.vocab_size));
    b.Embedding(p + ".embed_tokens_per_layer", vocab, width);
    b.Buffer(p + ".embed_tokens_per_layer.embed_scale", {}, Dtype::kF32, false);
    QLinear(b, q, p + ".per_layer_model_projection", h, width, false);
    b.RmsNorm(p + ".per_layer_projection_norm", d.per_layer);
  }
  uint64_t unloaded_bytes = 0;
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    hp.layers.push_back(
        Gemma4TextLayer(b, q, Layer(p + ".layers", i), i, sliding[i], d, unloaded_bytes));
  }
  if (shared_layers > 0) {
    m.notes.push_back(fmt::format(
        "the {} KV-shared layers' k_proj/v_proj/k_norm ({} bytes) are stored in the checkpoint "
        "but not loaded by transformers",
        shared_layers, unloaded_bytes));
  }
  b.RmsNorm(p + ".norm", h);
  // Non-persistent rotary tables per layer type (inv_freq and its original copy).
  for (const auto& [type, dim] :
       {std::pair{"sliding_attention", hp.head_dim},
        std::pair{"full_attention", d.global_hd ? d.global_hd : hp.head_dim}}) {
    b.Buffer(p + ".rotary_emb." + type + "_inv_freq", {dim / 2}, Dtype::kF32, false);
    b.Buffer(p + ".rotary_emb." + type + "_original_inv_freq", {dim / 2}, Dtype::kF32, false);
  }
  if (multimodal) {
    auto vision = top.Sub("vision_config");
    if (vision) {
      VisionTower(b, q, *vision, h);
    } else if (top.Has("vision_config")) {
      b.Fail(vision.error());
    }
    auto audio = top.Sub("audio_config");
    if (audio) {
      AudioTower(b, q, *audio, h);
    } else if (top.Has("audio_config")) {
      b.Fail(audio.error());
    }
  }
  b.SetComponent(multimodal ? "language_model" : "");
  LmHead(b, p + ".embed_tokens");
  NoteQuantization(b, q);
  if (const auto* qc = QuantizationConfigJson(top);
      q.method != QuantMethod::kNone && qc && qc->is_object() &&
      ((qc->contains("kv_cache_scheme") && !(*qc)["kv_cache_scheme"].is_null()) ||
       qc->contains("kv_cache_quant_algo"))) {
    m.assumptions.push_back(
        "FP8 KV-cache scales (float32 k_scale / v_scale scalars that ModelOpt may export per "
        "attention layer) not counted: at most 8 bytes a layer");
  }
  m.no_split_patterns = {p + ".layers.*", "model.vision_tower.encoder.layers.*",
                         "model.audio_tower.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
