// Phi-3 family: phi3 (Phi-3, Phi-3.5, Phi-4: fused qkv_proj and gate_up_proj) and phimoe
// (Phi-3.5-MoE: LayerNorm with biases, biased attention, Mixtral-style block_sparse_moe).
// Names and shapes: transformers/models/phi3/modeling_phi3.py, phimoe/modeling_phimoe.py.

#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {

Result<Model> BuildPhi3(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  ReadDecoderBasics(b, c, {});
  auto& hp = m.hp;
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const bool bias = Get(b, c.BoolOr("attention_bias", false));
  const uint64_t window = Get(b, c.UintOr("sliding_window", 0));
  const uint64_t rotary = RotaryDim(b, c, hp.head_dim, 1.0);
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size, hd = hp.head_dim;
  // Phi-3 uses the window on every layer; a window at least the context is full attention.
  const bool sliding = window > 0 && (hp.max_position_embeddings == 0 ||
                                      window < hp.max_position_embeddings);
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    b.RmsNorm(l + ".input_layernorm", h);
    QLinear(b, q, l + ".self_attn.qkv_proj", h,
            (hp.num_attention_heads + 2 * hp.num_kv_heads) * hd, bias);
    QLinear(b, q, l + ".self_attn.o_proj", hp.num_attention_heads * hd, h, bias);
    QLinear(b, q, l + ".mlp.gate_up_proj", h, 2 * hp.intermediate_size, false);
    QLinear(b, q, l + ".mlp.down_proj", hp.intermediate_size, h, false);
    b.RmsNorm(l + ".post_attention_layernorm", h);
    LayerInfo info = AttentionInfo(hp, sliding, window);
    info.intermediate_size = hp.intermediate_size;
    hp.layers.push_back(info);
    // transformers 4.42: one rotary embedding (inv_freq [rotary_dim / 2]) per attention module.
    if (o.buffers == BufferConvention::kTransformers442) {
      b.Buffer(l + ".self_attn.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
    }
  }
  b.RmsNorm("model.norm", h);
  if (o.buffers == BufferConvention::kCurrent) {
    b.Buffer("model.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
  }
  return FinishDecoder(b, c, o, q);
}

Result<Model> BuildPhiMoe(const HfConfig& c, const BuildOptions& o) {
  ModelBuilder b(c);
  Model& m = b.model();
  ReadDecoderBasics(b, c, {});
  auto& hp = m.hp;
  hp.norm = "layernorm";
  hp.gated_mlp = true;
  hp.num_experts = Get(b, c.Uint("num_local_experts"));
  hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
  hp.moe_intermediate_size = hp.intermediate_size;
  const bool bias = Get(b, c.BoolOr("attention_bias", true));
  const bool lm_bias = Get(b, c.BoolOr("lm_head_bias", false));
  const uint64_t window = Get(b, c.UintOr("sliding_window", 0));
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size, hd = hp.head_dim;
  const bool sliding = window > 0 && (hp.max_position_embeddings == 0 ||
                                      window < hp.max_position_embeddings);
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    b.LayerNorm(l + ".input_layernorm", h);
    QLinear(b, q, l + ".self_attn.q_proj", h, hp.num_attention_heads * hd, bias);
    QLinear(b, q, l + ".self_attn.k_proj", h, hp.num_kv_heads * hd, bias);
    QLinear(b, q, l + ".self_attn.v_proj", h, hp.num_kv_heads * hd, bias);
    QLinear(b, q, l + ".self_attn.o_proj", hp.num_attention_heads * hd, h, bias);
    b.Linear(l + ".block_sparse_moe.gate", h, hp.num_experts, false);
    RepeatedModules(b, q, l + ".block_sparse_moe.experts", hp.num_experts,
                    [&](const std::string& x) {
                      QLinear(b, q, x + ".w1", h, hp.intermediate_size, false);
                      QLinear(b, q, x + ".w2", hp.intermediate_size, h, false);
                      QLinear(b, q, x + ".w3", h, hp.intermediate_size, false);
                    });
    b.LayerNorm(l + ".post_attention_layernorm", h);
    LayerInfo info = AttentionInfo(hp, sliding, window);
    info.moe = true;
    hp.layers.push_back(info);
  }
  b.LayerNorm("model.norm", h);
  b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  return FinishDecoder(b, c, o, q, lm_bias);
}

}  // namespace memfit::arch
