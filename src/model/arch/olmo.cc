// AI2 OLMo: olmo (llama layout with parameter-free LayerNorms: no norm tensors at all) and
// olmo2 (no input norm; q_norm/k_norm over the whole projection, post-attention and
// post-feed-forward RMSNorms). Cohere: cohere (parallel attention + MLP after one weight-only
// LayerNorm, optional per-head q_norm [heads, head_dim] / k_norm, tied embeddings) and cohere2
// (same tensors, 3 sliding : 1 global layers). Sources: transformers/models/{olmo,olmo2,cohere,
// cohere2}/modeling_*.py.

#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

enum class Kind : uint8_t { kOlmo, kOlmo2, kCohere, kCohere2 };

Result<Model> BuildOlmoCohere(const HfConfig& c, const BuildOptions& o, Kind kind) {
  ModelBuilder b(c);
  Model& m = b.model();
  const bool cohere = kind == Kind::kCohere || kind == Kind::kCohere2;
  ReadDecoderBasics(b, c, {.tie = cohere});
  auto& hp = m.hp;
  hp.norm = kind == Kind::kOlmo2 ? "rmsnorm" : "layernorm";
  hp.gated_mlp = true;
  const bool bias = Get(b, c.BoolOr("attention_bias", false));
  const bool qk_norm = kind == Kind::kCohere && Get(b, c.BoolOr("use_qk_norm", false));
  const uint64_t window = kind == Kind::kCohere2 ? Get(b, c.UintOr("sliding_window", 4096)) : 0;
  const uint64_t pattern = kind == Kind::kCohere2 ? Get(b, c.UintOr("sliding_window_pattern", 4)) : 1;
  if (!b.failed() && pattern == 0) {
    b.Fail(MakeError("{}: field \"sliding_window_pattern\" must not be zero", c.where()));
  }
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  std::vector<bool> sliding = SlidingLayers(b, c, hp.num_layers, [&](uint64_t i) {
    return kind == Kind::kCohere2 && (i + 1) % pattern != 0;
  });
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, nh = hp.num_attention_heads,
                 nkv = hp.num_kv_heads, inter = hp.intermediate_size;
  const bool per_layer_rotary = o.buffers == BufferConvention::kTransformers442 &&
                                (kind == Kind::kOlmo || kind == Kind::kCohere);
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    if (cohere) b.Param(l + ".input_layernorm.weight", {h});  // CohereLayerNorm: no bias
    QLinear(b, q, l + ".self_attn.q_proj", h, nh * hd, bias);
    QLinear(b, q, l + ".self_attn.k_proj", h, nkv * hd, bias);
    QLinear(b, q, l + ".self_attn.v_proj", h, nkv * hd, bias);
    QLinear(b, q, l + ".self_attn.o_proj", nh * hd, h, bias);
    if (kind == Kind::kOlmo2) {
      b.RmsNorm(l + ".self_attn.q_norm", nh * hd);
      b.RmsNorm(l + ".self_attn.k_norm", nkv * hd);
    }
    if (qk_norm) {
      b.Param(l + ".self_attn.q_norm.weight", {nh, hd});
      b.Param(l + ".self_attn.k_norm.weight", {nkv, hd});
    }
    if (per_layer_rotary) {
      b.Buffer(l + ".self_attn.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
    }
    QLinear(b, q, l + ".mlp.gate_proj", h, inter, false);
    QLinear(b, q, l + ".mlp.up_proj", h, inter, false);
    QLinear(b, q, l + ".mlp.down_proj", inter, h, false);
    if (kind == Kind::kOlmo2) {
      b.RmsNorm(l + ".post_attention_layernorm", h);
      b.RmsNorm(l + ".post_feedforward_layernorm", h);
    }
    LayerInfo info = AttentionInfo(hp, sliding[i], window);
    info.intermediate_size = inter;
    hp.layers.push_back(info);
  }
  if (kind == Kind::kOlmo2) b.RmsNorm("model.norm", h);
  if (cohere) b.Param("model.norm.weight", {h});
  if (!per_layer_rotary) b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  TaskHead(b, c, o, "model.embed_tokens");
  NoteQuantization(b, q);
  if (kind == Kind::kOlmo) m.notes.push_back("OLMo's LayerNorms have no parameters");
  m.no_split_patterns = {"model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace

Result<Model> BuildOlmo(const HfConfig& c, const BuildOptions& o) {
  return BuildOlmoCohere(c, o, Kind::kOlmo);
}
Result<Model> BuildOlmo2(const HfConfig& c, const BuildOptions& o) {
  return BuildOlmoCohere(c, o, Kind::kOlmo2);
}
Result<Model> BuildCohere(const HfConfig& c, const BuildOptions& o) {
  return BuildOlmoCohere(c, o, Kind::kCohere);
}
Result<Model> BuildCohere2(const HfConfig& c, const BuildOptions& o) {
  return BuildOlmoCohere(c, o, Kind::kCohere2);
}

}  // namespace memfit::arch
