// Liquid LFM2 (lfm2): gated short-convolution layers and attention layers ("full_attn_idxs", or
// "layer_types" of "full_attention"/"conv"), each with operator_norm, ffn_norm and a SwiGLU
// feed_forward (w1, w3 [ff, H], w2 [H, ff]). Short conv: conv.in_proj [3 x conv_dim, conv_dim],
// depthwise conv.conv [conv_dim, 1, conv_L_cache], conv.out_proj, biases with "conv_bias".
// Attention: q/k/v_proj, out_proj, per-head q_layernorm/k_layernorm [head_dim]. The final norm is
// model.embedding_norm; embeddings tied by default ("tie_embedding" in the original configs).
// FFN width (Lfm2MLP): ff = "block_ff_dim" (or "intermediate_size"); with block_auto_adjust_ff_dim,
// ff = int(2 x ff / 3), ff = int(block_ffn_dim_multiplier x ff), then rounded up to a multiple of
// block_multiple_of. Source: transformers/models/lfm2/{modular,configuration}_lfm2.py.

#include <cmath>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

// Lfm2MLP's feed-forward width.
uint64_t Lfm2FfDim(ModelBuilder& b, const HfConfig& c) {
  uint64_t ff =
      Get(b, c.Has("block_ff_dim") ? c.Uint("block_ff_dim") : c.Uint("intermediate_size"));
  if (!Get(b, c.BoolOr("block_auto_adjust_ff_dim", true)) || b.failed()) return ff;
  ff = 2 * ff / 3;  // int(2 * ff / 3): ff is at most 2^40, so the float and integer forms agree
  const auto mult = c.raw().find("block_ffn_dim_multiplier");
  if (mult != c.raw().end() && !mult->is_null()) {
    const double factor = Get(b, c.NumberOr("block_ffn_dim_multiplier", 1.0));
    if (!(factor > 0.0 && factor <= 1024.0)) {
      b.Fail(MakeError("{}: \"block_ffn_dim_multiplier\" = {} must be in (0, 1024]", c.where(),
                       factor));
      return 0;
    }
    ff = static_cast<uint64_t>(std::floor(factor * static_cast<double>(ff)));
  }
  const uint64_t multiple = Get(b, c.UintOr("block_multiple_of", 256));
  if (!b.failed() && multiple == 0) {
    b.Fail(MakeError("{}: field \"block_multiple_of\" must not be zero", c.where()));
    return 0;
  }
  return multiple * ((ff + multiple - 1) / multiple);
}

// Per layer: true for attention. "layer_types" wins; else "full_attn_idxs" (default: all).
std::vector<bool> Lfm2AttentionLayers(ModelBuilder& b, const HfConfig& c, uint64_t layers) {
  std::vector<bool> out;
  if (const auto it = c.raw().find("layer_types"); it != c.raw().end() && !it->is_null()) {
    if (!it->is_array() || it->size() != layers) {
      b.Fail(MakeError("{}: \"layer_types\" must list one type per layer ({} layers)", c.where(),
                       layers));
      return out;
    }
    for (const auto& t : *it)
      out.push_back(t.is_string() && t.get<std::string>() == "full_attention");
    return out;
  }
  const auto it = c.raw().find("full_attn_idxs");
  if (it == c.raw().end() || it->is_null()) {
    b.Fail(MakeError("{}: field \"full_attn_idxs\" (or \"layer_types\") is missing", c.where()));
    return out;
  }
  if (!it->is_array()) {
    b.Fail(MakeError("{}: field \"full_attn_idxs\" must be a list of layer indices", c.where()));
    return out;
  }
  out.assign(layers, false);
  for (const auto& v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<uint64_t>() >= layers) {
      b.Fail(MakeError("{}: \"full_attn_idxs\" holds {}, not a layer index below {}", c.where(),
                       v.dump(), layers));
      return {};
    }
    out[v.get<uint64_t>()] = true;
  }
  return out;
}

}  // namespace

Result<Model> BuildLfm2(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  ReadDecoderBasics(b, c, {.tie = true, .need_intermediate = false});
  // Lfm2Config: the original key "tie_embedding" wins over "tie_word_embeddings".
  if (c.Has("tie_embedding")) hp.tie_word_embeddings = Get(b, c.BoolOr("tie_embedding", true));
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const bool conv_bias = Get(b, c.BoolOr("conv_bias", false));
  const uint64_t kernel = Get(b, c.UintOr("conv_L_cache", 3));
  const uint64_t conv_dim = Get(b, c.UintOr("conv_dim", hp.hidden_size));
  hp.intermediate_size = Lfm2FfDim(b, c);
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  if (kernel == 0) return MakeError("{}: field \"conv_L_cache\" must not be zero", c.where());
  if (conv_dim != hp.hidden_size) {
    return MakeError(
        "{}: \"conv_dim\" = {} differs from \"hidden_size\" = {} (transformers' "
        "Lfm2ShortConv uses hidden_size)",
        c.where(), conv_dim, hp.hidden_size);
  }
  // Layer kinds are read only once the layer count has passed the tensor-cap guard below.
  if (hp.num_layers > o.max_tensors) {
    return MakeError("{}: \"num_hidden_layers\" = {} is absurd", c.where(), hp.num_layers);
  }
  const std::vector<bool> attention = Lfm2AttentionLayers(b, c, hp.num_layers);
  if (b.failed()) return b.Finish();
  hp.shortconv_l_cache = kernel;
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, ff = hp.intermediate_size;
  const uint64_t q_width = MulDims(b, hp.num_attention_heads, hd, "num_attention_heads x head_dim");
  const uint64_t kv_width = MulDims(b, hp.num_kv_heads, hd, "num_key_value_heads x head_dim");
  const uint64_t in_width = MulDims(b, 3, h, "3 x hidden_size");
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    LayerInfo info = AttentionInfo(hp, false, 0);
    if (attention[i]) {
      QLinear(b, q, l + ".self_attn.q_proj", h, q_width, false);
      QLinear(b, q, l + ".self_attn.k_proj", h, kv_width, false);
      QLinear(b, q, l + ".self_attn.v_proj", h, kv_width, false);
      QLinear(b, q, l + ".self_attn.out_proj", q_width, h, false);
      b.RmsNorm(l + ".self_attn.q_layernorm", hd);
      b.RmsNorm(l + ".self_attn.k_layernorm", hd);
    } else {
      b.Conv(l + ".conv.conv", h, h, {kernel}, conv_bias, h);
      QLinear(b, q, l + ".conv.in_proj", h, in_width, conv_bias);
      QLinear(b, q, l + ".conv.out_proj", h, h, conv_bias);
      info = LayerInfo{};
      info.attention = AttentionKind::kNone;
      info.mixer = LayerMixer::kShortConv;
      info.recurrent = true;
      info.state.conv_channels = h;
      info.state.conv_kernel = kernel;
    }
    QLinear(b, q, l + ".feed_forward.w1", h, ff, false);
    QLinear(b, q, l + ".feed_forward.w3", h, ff, false);
    QLinear(b, q, l + ".feed_forward.w2", ff, h, false);
    b.RmsNorm(l + ".operator_norm", h);
    b.RmsNorm(l + ".ffn_norm", h);
    info.intermediate_size = ff;
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.embedding_norm", h);
  b.Buffer("model.pos_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  return FinishDecoder(b, c, o, q);
}

}  // namespace memfit::arch
