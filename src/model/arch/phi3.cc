// Phi-3 family, one builder: phi3 (Phi-3, Phi-3.5, Phi-4: RMSNorms, fused qkv_proj and
// gate_up_proj, partial rotary) and phimoe (Phi-3.5-MoE: LayerNorms with biases, q/k/v/o_proj
// biased by default, Mixtral-style block_sparse_moe, "lm_head_bias"). Both put the window on
// every layer. Not a DecoderSpec row: phi3's 4.42 rotary buffer follows the layer's norms, and
// phimoe's norms are LayerNorms.
// Names and shapes: transformers/models/phi3/modeling_phi3.py, phimoe/modeling_phimoe.py.

#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"
#include "model/arch/repeated_modules.h"

namespace memfit::arch {
namespace {

Result<Model> BuildPhi3Family(const HfConfig& c, const BuildOptions& o, bool moe) {
  ModelBuilder b(c);
  Model& m = b.model();
  ReadDecoderBasics(b, c, {});
  auto& hp = m.hp;
  hp.norm = moe ? "layernorm" : "rmsnorm";
  hp.gated_mlp = true;
  if (moe) {
    hp.num_experts = Get(b, c.Uint("num_local_experts"));
    hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
    hp.moe_intermediate_size = hp.intermediate_size;
  }
  const bool bias = Get(b, c.BoolOr("attention_bias", moe));
  const bool lm_bias = moe && Get(b, c.BoolOr("lm_head_bias", false));
  const uint64_t window = Get(b, c.UintOr("sliding_window", 0));
  const uint64_t rotary = moe ? hp.head_dim : RotaryDim(b, c, hp.head_dim, 1.0);
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, inter = hp.intermediate_size;
  const uint64_t nh = hp.num_attention_heads, nkv = hp.num_kv_heads;
  // A window at least the context is full attention.
  const bool sliding = window > 0 && (hp.max_position_embeddings == 0 ||
                                      window < hp.max_position_embeddings);
  const auto norm = [&](const std::string& name) {
    if (moe) {
      b.LayerNorm(name, h);
    } else {
      b.RmsNorm(name, h);
    }
  };
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    norm(l + ".input_layernorm");
    LayerInfo info = AttentionInfo(hp, sliding, window);
    if (moe) {
      QLinear(b, q, l + ".self_attn.q_proj", h, nh * hd, bias);
      QLinear(b, q, l + ".self_attn.k_proj", h, nkv * hd, bias);
      QLinear(b, q, l + ".self_attn.v_proj", h, nkv * hd, bias);
      QLinear(b, q, l + ".self_attn.o_proj", nh * hd, h, bias);
      b.Linear(l + ".block_sparse_moe.gate", h, hp.num_experts, false);
      RepeatedModules(b, q, l + ".block_sparse_moe.experts", hp.num_experts,
                      [&](const std::string& x) {
                        QLinear(b, q, x + ".w1", h, inter, false);
                        QLinear(b, q, x + ".w2", inter, h, false);
                        QLinear(b, q, x + ".w3", h, inter, false);
                      });
      info.moe = true;
    } else {
      QLinear(b, q, l + ".self_attn.qkv_proj", h, (nh + 2 * nkv) * hd, bias);
      QLinear(b, q, l + ".self_attn.o_proj", nh * hd, h, bias);
      QLinear(b, q, l + ".mlp.gate_up_proj", h, 2 * inter, false);
      QLinear(b, q, l + ".mlp.down_proj", inter, h, false);
      info.intermediate_size = inter;
    }
    norm(l + ".post_attention_layernorm");
    hp.layers.push_back(info);
    // phi3 under transformers 4.42: one rotary embedding (inv_freq [rotary_dim / 2]) per
    // attention module, after the layer's norms in the state dict.
    if (!moe && o.buffers == BufferConvention::kTransformers442) {
      b.Buffer(l + ".self_attn.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
    }
  }
  norm("model.norm");
  if (moe || o.buffers == BufferConvention::kCurrent) {
    b.Buffer("model.rotary_emb.inv_freq", {rotary / 2}, Dtype::kF32, false);
  }
  return FinishDecoder(b, c, o, q, lm_bias);
}

}  // namespace

Result<Model> BuildPhi3(const HfConfig& c, const BuildOptions& o) {
  return BuildPhi3Family(c, o, false);
}

Result<Model> BuildPhiMoe(const HfConfig& c, const BuildOptions& o) {
  return BuildPhi3Family(c, o, true);
}

}  // namespace memfit::arch
