// Liquid LFM2 (lfm2): gated short-convolution layers and attention layers ("full_attn_idxs", or
// "layer_types" of "full_attention"/"conv"), each with operator_norm, ffn_norm and a SwiGLU
// feed_forward (w1, w3 [ff, H], w2 [H, ff]). Short conv: conv.in_proj [3 x conv_dim, conv_dim],
// depthwise conv.conv [conv_dim, 1, conv_L_cache], conv.out_proj, biases with "conv_bias".
// Attention: q/k/v_proj, out_proj, per-head q_layernorm/k_layernorm [head_dim]. The final norm is
// model.embedding_norm; embeddings tied by default ("tie_embedding" in the original configs).
// FFN width (Lfm2MLP): ff = "block_ff_dim" (or "intermediate_size"); with block_auto_adjust_ff_dim,
// ff = int(2 x ff / 3), ff = int(block_ffn_dim_multiplier x ff), then rounded up to a multiple of
// block_multiple_of. Source: transformers/models/lfm2/{modular,configuration}_lfm2.py.
// LFM2-MoE (lfm2_moe, LiquidAI/LFM2-8B-A1B): the same layers ("layer_types" required), the
// first "num_dense_layers" with a SwiGLU feed_forward of "intermediate_size" as is (Lfm2MoeMLP:
// no block_* adjustment), the rest a sparse block: feed_forward.gate [num_experts, H] (no bias),
// feed_forward.expert_bias [num_experts] (a persistent float32 buffer, with "use_expert_bias"),
// and per-expert feed_forward.experts.N.{w1, w3 [moe_intermediate_size, H], w2} as the Hub
// checkpoint stores them (llama.cpp convert_hf_to_gguf.py LFM2MoeModel merges those per-expert
// tensors). Source: transformers/models/lfm2_moe/{modeling,configuration}_lfm2_moe.py.

#include <cmath>

#include "formats/hf_config_json.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/issue30_families.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

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

// Lfm2MoeConfig's MoE fields; experts == 0 for dense LFM2.
struct Lfm2Moe {
  uint64_t experts = 0, dense_layers = 0, width = 0;
  bool expert_bias = false;
};

Lfm2Moe ReadLfm2Moe(ModelBuilder& b, const HfConfig& c, Hyperparameters& hp) {
  Lfm2Moe x;
  x.experts = Get(b, c.UintOr("num_experts", 32));
  x.dense_layers = Get(b, c.UintOr("num_dense_layers", 2));
  x.width = Get(b, c.UintOr("moe_intermediate_size", 1792));
  x.expert_bias = Get(b, c.BoolOr("use_expert_bias", true));
  hp.num_experts = x.experts;
  hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", 4));
  hp.moe_intermediate_size = x.width;
  if (!b.failed() && (x.experts == 0 || x.width == 0)) {
    b.Fail(MakeError("{}: \"num_experts\" and \"moe_intermediate_size\" must be positive",
                     c.where()));
  }
  return x;
}

// One layer's feed_forward: dense SwiGLU of width `ff`, or the sparse block of `x`.
void Lfm2FeedForward(ModelBuilder& b, const Quantization& q, const std::string& l, uint64_t h,
                     uint64_t ff, const Lfm2Moe* x) {
  const std::string f = l + ".feed_forward";
  if (x == nullptr) {
    QLinear(b, q, f + ".w1", h, ff, false);
    QLinear(b, q, f + ".w3", h, ff, false);
    QLinear(b, q, f + ".w2", ff, h, false);
    return;
  }
  b.Linear(f + ".gate", h, x->experts, false);
  if (x->expert_bias) b.Buffer(f + ".expert_bias", {x->experts}, Dtype::kF32, true);
  RepeatedModules(b, q, f + ".experts", x->experts, [&](const std::string& e) {
    QLinear(b, q, e + ".w1", h, x->width, false);
    QLinear(b, q, e + ".w3", h, x->width, false);
    QLinear(b, q, e + ".w2", x->width, h, false);
  });
}

Result<Model> BuildLfm2Like(const HfConfig& c, const BuildOptions& o, bool moe) {
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
  Lfm2Moe experts;
  if (moe) {
    hp.intermediate_size = Get(b, c.Uint("intermediate_size"));  // Lfm2MoeMLP: as is
    experts = ReadLfm2Moe(b, c, hp);
  } else {
    hp.intermediate_size = Lfm2FfDim(b, c);
  }
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
  if (moe && !c.Has("layer_types")) {
    return MakeError("{}: field \"layer_types\" is missing (Lfm2MoeConfig requires it)",
                     c.where());
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
    const bool sparse = moe && i >= experts.dense_layers;
    Lfm2FeedForward(b, q, l, h, ff, sparse ? &experts : nullptr);
    b.RmsNorm(l + ".operator_norm", h);
    b.RmsNorm(l + ".ffn_norm", h);
    info.moe = sparse;
    info.intermediate_size = sparse ? 0 : ff;
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.embedding_norm", h);
  b.Buffer("model.pos_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  return FinishDecoder(b, c, o, q);
}

}  // namespace

Result<Model> BuildLfm2(const HfConfig& c, const BuildOptions& o) {
  return BuildLfm2Like(c, o, /*moe=*/false);
}

Result<Model> BuildLfm2Moe(const HfConfig& c, const BuildOptions& o) {
  return BuildLfm2Like(c, o, /*moe=*/true);
}

}  // namespace memfit::arch
