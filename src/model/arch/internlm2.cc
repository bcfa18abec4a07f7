// InternLM2 / InternLM2.5 (remote code, InternLM2ForCausalLM): model.tok_embeddings,
// layers.N.{attention_norm, attention.wqkv [(heads + 2 * kv_heads) * head_dim, H], attention.wo,
// ffn_norm, feed_forward.{w1, w3, w2}}, model.norm, output. "bias" (default true) gives wqkv and
// wo biases. Source: internlm/internlm2-7b modeling_internlm2.py and its weight index.

#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

Result<Model> BuildInternLm2(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  ReadDecoderBasics(b, c, {});
  auto& hp = m.hp;
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const bool bias = Get(b, c.BoolOr("bias", true));
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, nh = hp.num_attention_heads,
                 nkv = hp.num_kv_heads, inter = hp.intermediate_size;
  b.Embedding("model.tok_embeddings", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    b.RmsNorm(l + ".attention_norm", h);
    QLinear(b, q, l + ".attention.wqkv", h, (nh + 2 * nkv) * hd, bias);
    QLinear(b, q, l + ".attention.wo", nh * hd, h, bias);
    if (o.buffers == BufferConvention::kTransformers442) {
      // The remote code's rotary embedding caches float32 cos/sin per attention module.
      const std::string r = l + ".attention.rotary_emb";
      b.Buffer(r + ".inv_freq", {hd / 2}, Dtype::kF32, false);
      b.Buffer(r + ".cos_cached", {hp.max_position_embeddings, hd}, Dtype::kF32, false);
      b.Buffer(r + ".sin_cached", {hp.max_position_embeddings, hd}, Dtype::kF32, false);
    }
    b.RmsNorm(l + ".ffn_norm", h);
    QLinear(b, q, l + ".feed_forward.w1", h, inter, false);
    QLinear(b, q, l + ".feed_forward.w3", h, inter, false);
    QLinear(b, q, l + ".feed_forward.w2", inter, h, false);
    hp.layers.push_back(DenseAttentionInfo(hp, inter));
  }
  b.RmsNorm("model.norm", h);
  std::string cls = o.head_class;
  if (cls.empty()) {
    auto archs = c.architectures();
    cls = archs.empty() ? "ForCausalLM" : archs.front();
  }
  if (cls.ends_with("ForCausalLM")) {
    b.SetHead(true);
    if (hp.tie_word_embeddings) {
      b.Tied("output.weight", {hp.vocab_size, h}, "model.tok_embeddings.weight");
    } else {
      b.Linear("output", h, hp.vocab_size, false);
    }
    b.SetHead(false);
  } else if (!cls.ends_with("Model")) {
    b.Fail(MakeError("{}: head class \"{}\" is not supported for internlm2 (causal LM only); the "
                     "safetensors headers give an exact answer", c.where(), cls));
  }
  NoteQuantization(b, q);
  m.no_split_patterns = {"model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
