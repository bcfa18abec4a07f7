// LayerNorm decoders with partial rotary embeddings: phi (phi-1, phi-1.5, phi-2: parallel
// attention + fc1/fc2 MLP after one LayerNorm, self_attn.dense output, final_layernorm, biased
// lm_head), stablelm (StableLM 2 / Zephyr: LayerNorms with bias, optional per-head q/k
// LayerNorms, optional parallel residual) and starcoder2 (biased projections, c_fc/c_proj MLP,
// sliding window, tied embeddings). stablelm_epoch (StableLM-3B-4E1T and the first StableLM 2
// releases, remote code modeling_stablelm_epoch.py): stablelm's tensor names, its rotary width
// from "rope_pct". Sources: transformers/models/{phi,stablelm,starcoder2}/modeling_*.py.

#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

enum class PhiKind : uint8_t { kPhi, kStableLm, kStableLmEpoch, kStarcoder2 };

Result<Model> BuildLayerNormDecoder(const HfConfig& c, const BuildOptions& o, PhiKind kind) {
  const bool epoch = kind == PhiKind::kStableLmEpoch;
  if (epoch) kind = PhiKind::kStableLm;
  ModelBuilder b(c);
  Model& m = b.model();
  DecoderDefaults d{.tie = kind == PhiKind::kStarcoder2};
  if (kind != PhiKind::kStableLm) d.act_default = "gelu_new";
  ReadDecoderBasics(b, c, d);
  auto& hp = m.hp;
  hp.norm = "layernorm";
  hp.gated_mlp = kind == PhiKind::kStableLm;
  bool qkv_bias = true, o_bias = true, mlp_bias = true, qk_norm = false, parallel = false;
  double rotary_default = 1.0;
  uint64_t window = 0;
  if (kind == PhiKind::kPhi) {
    qk_norm = Get(b, c.BoolOr("qk_layernorm", false));
    parallel = true;
    rotary_default = 0.5;
  } else if (kind == PhiKind::kStableLm) {
    qkv_bias = Get(b, c.BoolOr("use_qkv_bias", false));
    o_bias = mlp_bias = false;
    qk_norm = Get(b, c.BoolOr("qk_layernorm", false));
    parallel = Get(b, c.BoolOr("use_parallel_residual", false));
    // StableLMEpochConfig "rope_pct" (default 0.25) plays partial_rotary_factor's part.
    rotary_default = epoch ? Get(b, c.NumberOr("rope_pct", 0.25)) : 0.25;
  } else {
    qkv_bias = o_bias = mlp_bias = Get(b, c.BoolOr("use_bias", true));
    window = Get(b, c.UintOr("sliding_window", 0));
  }
  const uint64_t rotary = RotaryDim(b, c, hp.head_dim, rotary_default);
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, nh = hp.num_attention_heads,
                 nkv = hp.num_kv_heads, inter = hp.intermediate_size;
  const bool ln_bias = true;
  const bool per_layer_rotary = o.buffers == BufferConvention::kTransformers442;
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    b.LayerNorm(l + ".input_layernorm", h, ln_bias);
    QLinear(b, q, l + ".self_attn.q_proj", h, nh * hd, qkv_bias);
    QLinear(b, q, l + ".self_attn.k_proj", h, nkv * hd, qkv_bias);
    QLinear(b, q, l + ".self_attn.v_proj", h, nkv * hd, qkv_bias);
    QLinear(b, q, l + (kind == PhiKind::kPhi ? ".self_attn.dense" : ".self_attn.o_proj"), nh * hd, h,
            o_bias);
    if (qk_norm && kind == PhiKind::kPhi) {
      b.LayerNorm(l + ".self_attn.q_layernorm", hd);
      b.LayerNorm(l + ".self_attn.k_layernorm", hd);
    } else if (qk_norm) {
      // StableLmLayerNormPerHead: one bias-free LayerNorm per head.
      for (uint64_t n = 0; n < nh; ++n) b.Param(Layer(l + ".self_attn.q_layernorm.norms", n) + ".weight", {hd});
      for (uint64_t n = 0; n < nkv; ++n) b.Param(Layer(l + ".self_attn.k_layernorm.norms", n) + ".weight", {hd});
    }
    if (per_layer_rotary) {
      b.Buffer(l + ".self_attn.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
    }
    if (kind == PhiKind::kStableLm) {
      QGatedMlp(b, q, l + ".mlp", h, inter);
    } else {
      const bool phi = kind == PhiKind::kPhi;
      QLinear(b, q, l + (phi ? ".mlp.fc1" : ".mlp.c_fc"), h, inter, mlp_bias);
      QLinear(b, q, l + (phi ? ".mlp.fc2" : ".mlp.c_proj"), inter, h, mlp_bias);
    }
    if (!parallel) b.LayerNorm(l + ".post_attention_layernorm", h, ln_bias);
    LayerInfo info = AttentionInfo(hp, window > 0, window);
    info.intermediate_size = inter;
    hp.layers.push_back(info);
  }
  b.LayerNorm(kind == PhiKind::kPhi ? "model.final_layernorm" : "model.norm", h, ln_bias);
  if (!per_layer_rotary) b.Buffer("model.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
  TaskHead(b, c, o, "model.embed_tokens", kind == PhiKind::kPhi);
  NoteQuantization(b, q);
  m.no_split_patterns = {"model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace

Result<Model> BuildPhi(const HfConfig& c, const BuildOptions& o) {
  return BuildLayerNormDecoder(c, o, PhiKind::kPhi);
}
Result<Model> BuildStableLm(const HfConfig& c, const BuildOptions& o) {
  return BuildLayerNormDecoder(c, o, PhiKind::kStableLm);
}
Result<Model> BuildStableLmEpoch(const HfConfig& c, const BuildOptions& o) {
  return BuildLayerNormDecoder(c, o, PhiKind::kStableLmEpoch);
}
Result<Model> BuildStarcoder2(const HfConfig& c, const BuildOptions& o) {
  return BuildLayerNormDecoder(c, o, PhiKind::kStarcoder2);
}

}  // namespace memfit::arch
