// IBM Granite: granite (llama layout with attention/mlp bias options), granitemoe (fused expert
// tensors: block_sparse_moe.input_linear [E, 2*I, H], output_linear [E, H, I], router.layer
// [E, H]) and granitemoeshared (plus shared_mlp.input_linear/output_linear).
// Names and shapes: transformers/models/granite{,moe,moeshared}/modeling_*.py. The rotary
// embedding is model-level (model.rotary_emb.inv_freq) in every version that has Granite.

#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

enum class Kind : uint8_t { kDense, kMoe, kMoeShared };

Result<Model> BuildGraniteLike(const HfConfig& c, const BuildOptions& o, Kind kind) {
  ModelBuilder b(c);
  Model& m = b.model();
  ReadDecoderBasics(b, c, {});
  auto& hp = m.hp;
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  const bool bias = Get(b, c.BoolOr("attention_bias", false));
  const bool mlp_bias = Get(b, c.BoolOr("mlp_bias", false));
  uint64_t shared = 0;
  if (kind != Kind::kDense) {
    hp.num_experts = Get(b, c.Uint("num_local_experts"));
    hp.experts_per_token = Get(b, c.Uint("num_experts_per_tok"));
    hp.moe_intermediate_size = hp.intermediate_size;
  }
  if (kind == Kind::kMoeShared) {
    shared = Get(b, c.UintOr("shared_intermediate_size", 0));
    hp.num_shared_experts = shared > 0 ? 1 : 0;
  }
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  const uint64_t h = hp.hidden_size, hd = hp.head_dim, nh = hp.num_attention_heads,
                 nkv = hp.num_kv_heads, inter = hp.intermediate_size, e = hp.num_experts;
  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    b.RmsNorm(l + ".input_layernorm", h);
    QLinear(b, q, l + ".self_attn.q_proj", h, nh * hd, bias);
    QLinear(b, q, l + ".self_attn.k_proj", h, nkv * hd, bias);
    QLinear(b, q, l + ".self_attn.v_proj", h, nkv * hd, bias);
    QLinear(b, q, l + ".self_attn.o_proj", nh * hd, h, bias);
    LayerInfo info = AttentionInfo(hp, false, 0);
    if (kind == Kind::kDense) {
      QLinear(b, q, l + ".mlp.gate_proj", h, inter, mlp_bias);
      QLinear(b, q, l + ".mlp.up_proj", h, inter, mlp_bias);
      QLinear(b, q, l + ".mlp.down_proj", inter, h, mlp_bias);
      info.intermediate_size = inter;
    } else {
      // GraniteMoeParallelExperts keep all experts in one 3-D weight [E, out, in].
      b.Param(l + ".block_sparse_moe.input_linear.weight", {e, 2 * inter, h});
      b.Param(l + ".block_sparse_moe.output_linear.weight", {e, h, inter});
      b.Linear(l + ".block_sparse_moe.router.layer", h, e, false);
      if (shared > 0) {
        b.Linear(l + ".shared_mlp.input_linear", h, 2 * shared, false);
        b.Linear(l + ".shared_mlp.output_linear", shared, h, false);
      }
      info.moe = true;
    }
    b.RmsNorm(l + ".post_attention_layernorm", h);
    hp.layers.push_back(info);
  }
  b.RmsNorm("model.norm", h);
  b.Buffer("model.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  return FinishDecoder(b, c, o, q);
}

}  // namespace

Result<Model> BuildGranite(const HfConfig& c, const BuildOptions& o) {
  return BuildGraniteLike(c, o, Kind::kDense);
}
Result<Model> BuildGraniteMoe(const HfConfig& c, const BuildOptions& o) {
  return BuildGraniteLike(c, o, Kind::kMoe);
}
Result<Model> BuildGraniteMoeShared(const HfConfig& c, const BuildOptions& o) {
  return BuildGraniteLike(c, o, Kind::kMoeShared);
}

}  // namespace memfit::arch
