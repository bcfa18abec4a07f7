// Gemma family: gemma (llama layout, tied embeddings, head_dim 256), gemma2 (pre/post
// feed-forward norms, alternating sliding-window layers) and gemma3_text (gemma2 plus per-head
// q_norm/k_norm, 5 sliding : 1 global layers, scaled embedding buffer, local and global rotary).
// Names and shapes: transformers/models/gemma{,2,3}/modeling_gemma*.py.

#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

enum class Gen : uint8_t { kGemma, kGemma2, kGemma3 };

Result<Model> BuildGemmaLike(const HfConfig& c, const BuildOptions& o, Gen gen) {
  ModelBuilder b(c);
  Model& m = b.model();
  DecoderDefaults d{.tie = true};
  if (gen == Gen::kGemma) {
    d.act_default = "gelu_pytorch_tanh";
  } else {
    d.act_key = "hidden_activation";
    d.act_default = "gelu_pytorch_tanh";
  }
  ReadDecoderBasics(b, c, d);
  auto& hp = m.hp;
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const bool bias = Get(b, c.BoolOr("attention_bias", false));
  const uint64_t window = gen == Gen::kGemma ? 0 : Get(b, c.UintOr("sliding_window", 4096));
  const uint64_t pattern = gen == Gen::kGemma3 ? Get(b, c.UintOr("sliding_window_pattern", 6)) : 2;
  if (!b.failed() && pattern == 0) {
    b.Fail(MakeError("{}: field \"sliding_window_pattern\" must not be zero", c.where()));
  }
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  std::vector<bool> sliding = SlidingLayers(b, c, hp.num_layers, [&](uint64_t i) {
    if (gen == Gen::kGemma) return false;
    if (gen == Gen::kGemma2) return i % 2 == 0;  // even layers slide (Gemma2Attention)
    return (i + 1) % pattern != 0;                // every pattern-th layer is global
  });
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, nh = hp.num_attention_heads,
                 nkv = hp.num_kv_heads;
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  if (gen == Gen::kGemma3) b.Buffer("model.embed_tokens.embed_scale", {}, Dtype::kF32, false);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    b.RmsNorm(l + ".input_layernorm", h);
    QLinear(b, q, l + ".self_attn.q_proj", h, nh * hd, bias);
    QLinear(b, q, l + ".self_attn.k_proj", h, nkv * hd, bias);
    QLinear(b, q, l + ".self_attn.v_proj", h, nkv * hd, bias);
    QLinear(b, q, l + ".self_attn.o_proj", nh * hd, h, bias);
    if (gen == Gen::kGemma3) {
      b.RmsNorm(l + ".self_attn.q_norm", hd);
      b.RmsNorm(l + ".self_attn.k_norm", hd);
    }
    if (o.buffers == BufferConvention::kTransformers442 && gen != Gen::kGemma3) {
      // transformers 4.42: one rotary embedding per attention module.
      b.Buffer(l + ".self_attn.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
    }
    QLinear(b, q, l + ".mlp.gate_proj", h, hp.intermediate_size, false);
    QLinear(b, q, l + ".mlp.up_proj", h, hp.intermediate_size, false);
    QLinear(b, q, l + ".mlp.down_proj", hp.intermediate_size, h, false);
    b.RmsNorm(l + ".post_attention_layernorm", h);
    if (gen != Gen::kGemma) {
      b.RmsNorm(l + ".pre_feedforward_layernorm", h);
      b.RmsNorm(l + ".post_feedforward_layernorm", h);
    }
    LayerInfo info = AttentionInfo(hp, sliding[i], window);
    info.intermediate_size = hp.intermediate_size;
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.norm", h);
  if (gen == Gen::kGemma3) {
    b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
    b.Buffer("model.rotary_emb_local.inv_freq", {hd / 2}, Dtype::kF32, false);
  } else if (o.buffers == BufferConvention::kCurrent) {
    b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  }
  return FinishDecoder(b, c, o, q);
}

}  // namespace

Result<Model> BuildGemma(const HfConfig& c, const BuildOptions& o) {
  return BuildGemmaLike(c, o, Gen::kGemma);
}
Result<Model> BuildGemma2(const HfConfig& c, const BuildOptions& o) {
  return BuildGemmaLike(c, o, Gen::kGemma2);
}
Result<Model> BuildGemma3Text(const HfConfig& c, const BuildOptions& o) {
  return BuildGemmaLike(c, o, Gen::kGemma3);
}

}  // namespace memfit::arch
