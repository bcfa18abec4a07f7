// DeepSeek-V2 and -V3: multi-head latent attention (q_a_proj/q_a_layernorm/q_b_proj when
// q_lora_rank is set, else q_proj; kv_a_proj_with_mqa [kv_lora_rank + qk_rope_head_dim, H],
// kv_a_layernorm, kv_b_proj [heads * (qk_nope_head_dim + v_head_dim), kv_lora_rank]), dense MLPs
// in the first first_k_dense_replace layers and where layer % moe_layer_freq != 0, else routed
// experts (mlp.gate.weight [E, H], V3's e_score_correction_bias [E] in float32) plus
// shared_experts of width moe_intermediate_size * n_shared_experts. The checkpoints also store
// num_nextn_predict_layers multi-token-prediction layers after the last decoder layer (layer 61 of
// DeepSeek-V3: enorm, hnorm, eh_proj, its own embed_tokens and shared_head), which transformers
// does not load. Sources: deepseek-ai modeling_deepseek.py (V2, V3 repos),
// transformers/models/deepseek_v3/modeling_deepseek_v3.py; the stored dtypes (MTP eh_proj and
// shared_head in bfloat16) are confirmed by DeepSeek-R1's shard sizes (deepseek_test.cc).

#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {
namespace {

struct Mla {
  uint64_t q_lora = 0, kv_lora = 0, nope = 0, rope = 0, v = 0;
  bool bias = false;
};

void DecoderLayer(ModelBuilder& b, const Quantization& q, const std::string& l, const Mla& a,
                  bool moe, bool v3_bias, uint64_t shared) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size, nh = hp.num_attention_heads;
  b.RmsNorm(l + ".input_layernorm", h);
  if (a.q_lora > 0) {
    QLinear(b, q, l + ".self_attn.q_a_proj", h, a.q_lora, a.bias);
    b.RmsNorm(l + ".self_attn.q_a_layernorm", a.q_lora);
    QLinear(b, q, l + ".self_attn.q_b_proj", a.q_lora, nh * (a.nope + a.rope), false);
  } else {
    QLinear(b, q, l + ".self_attn.q_proj", h, nh * (a.nope + a.rope), false);
  }
  QLinear(b, q, l + ".self_attn.kv_a_proj_with_mqa", h, a.kv_lora + a.rope, a.bias);
  b.RmsNorm(l + ".self_attn.kv_a_layernorm", a.kv_lora);
  QLinear(b, q, l + ".self_attn.kv_b_proj", a.kv_lora, nh * (a.nope + a.v), false);
  QLinear(b, q, l + ".self_attn.o_proj", nh * a.v, h, a.bias);
  if (moe) {
    b.Param(l + ".mlp.gate.weight", {hp.num_experts, h});
    if (v3_bias) {
      b.Buffer(l + ".mlp.gate.e_score_correction_bias", {hp.num_experts}, Dtype::kF32, true);
    }
    for (uint64_t e = 0; e < hp.num_experts && !b.failed(); ++e) {
      const std::string x = Layer(l + ".mlp.experts", e);
      QLinear(b, q, x + ".gate_proj", h, hp.moe_intermediate_size, false);
      QLinear(b, q, x + ".up_proj", h, hp.moe_intermediate_size, false);
      QLinear(b, q, x + ".down_proj", hp.moe_intermediate_size, h, false);
    }
    if (shared > 0) {
      QLinear(b, q, l + ".mlp.shared_experts.gate_proj", h, shared, false);
      QLinear(b, q, l + ".mlp.shared_experts.up_proj", h, shared, false);
      QLinear(b, q, l + ".mlp.shared_experts.down_proj", shared, h, false);
    }
  } else {
    QLinear(b, q, l + ".mlp.gate_proj", h, hp.intermediate_size, false);
    QLinear(b, q, l + ".mlp.up_proj", h, hp.intermediate_size, false);
    QLinear(b, q, l + ".mlp.down_proj", hp.intermediate_size, h, false);
  }
  b.RmsNorm(l + ".post_attention_layernorm", h);
}

Result<Model> BuildDeepseek(const HfConfig& c, const BuildOptions& o, bool v3) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.Uint("num_hidden_layers"));
  hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  hp.num_kv_heads = Get(b, c.UintOr("num_key_value_heads", hp.num_attention_heads));
  hp.intermediate_size = Get(b, c.Uint("intermediate_size"));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 0));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", false));
  hp.activation = Get(b, c.StringOr("hidden_act", "silu"));
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
  Mla a;
  a.q_lora = Get(b, c.UintOr("q_lora_rank", 0));  // null: V2-Lite's plain q_proj
  a.kv_lora = Get(b, c.Uint("kv_lora_rank"));
  a.nope = Get(b, c.Uint("qk_nope_head_dim"));
  a.rope = Get(b, c.Uint("qk_rope_head_dim"));
  a.v = Get(b, c.Uint("v_head_dim"));
  a.bias = Get(b, c.BoolOr("attention_bias", false));
  hp.num_experts = Get(b, c.UintOr("n_routed_experts", 0));
  hp.experts_per_token = Get(b, c.UintOr("num_experts_per_tok", 0));
  hp.num_shared_experts = Get(b, c.UintOr("n_shared_experts", 0));
  hp.moe_intermediate_size = Get(b, c.UintOr("moe_intermediate_size", 0));
  const uint64_t first_dense = Get(b, c.UintOr("first_k_dense_replace", 0));
  const uint64_t freq = Get(b, c.UintOr("moe_layer_freq", 1));
  const uint64_t mtp = Get(b, c.UintOr("num_nextn_predict_layers", 0));
  const bool v3_bias = v3 && Get(b, c.StringOr("topk_method", "noaux_tc")) == "noaux_tc";
  Quantization q = ReadQuantization(b, c, o);
  if (b.failed()) return b.Finish();
  if (hp.num_attention_heads == 0) {
    return MakeError("{}: field \"num_attention_heads\" must not be zero", c.where());
  }
  if (freq == 0) return MakeError("{}: field \"moe_layer_freq\" must not be zero", c.where());
  if (hp.num_experts > 0 && hp.moe_intermediate_size == 0) {
    return MakeError("{}: \"n_routed_experts\" is set but \"moe_intermediate_size\" is missing or "
                     "zero", c.where());
  }
  if (a.kv_lora == 0 || a.nope + a.rope == 0 || a.v == 0) {
    return MakeError("{}: \"kv_lora_rank\", \"qk_nope_head_dim\" + \"qk_rope_head_dim\" and "
                     "\"v_head_dim\" must be positive", c.where());
  }
  hp.head_dim = a.nope + a.rope;
  hp.kv_lora_rank = a.kv_lora;
  hp.qk_rope_head_dim = a.rope;
  const uint64_t shared = hp.moe_intermediate_size * hp.num_shared_experts;
  const uint64_t h = hp.hidden_size;
  auto is_moe = [&](uint64_t i) { return hp.num_experts > 0 && i >= first_dense && i % freq == 0; };

  b.Embedding("model.embed_tokens", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("model.layers", i);
    DecoderLayer(b, q, l, a, is_moe(i), v3_bias, shared);
    LayerInfo info{.attention = AttentionKind::kMla, .num_heads = hp.num_attention_heads,
                   .num_kv_heads = hp.num_kv_heads, .head_dim_k = a.nope + a.rope,
                   .head_dim_v = a.v, .moe = is_moe(i),
                   .intermediate_size = is_moe(i) ? 0 : hp.intermediate_size};
    hp.layers.push_back(info);
    if (o.buffers == BufferConvention::kTransformers442) {
      // deepseek-ai's remote code: a (yarn) rotary embedding per attention with float32
      // cos/sin caches of [max_position_embeddings, qk_rope_head_dim].
      const std::string r = l + ".self_attn.rotary_emb";
      b.Buffer(r + ".inv_freq", {a.rope / 2}, Dtype::kF32, false);
      b.Buffer(r + ".cos_cached", {hp.max_position_embeddings, a.rope}, Dtype::kF32, false);
      b.Buffer(r + ".sin_cached", {hp.max_position_embeddings, a.rope}, Dtype::kF32, false);
    }
  }
  b.RmsNorm("model.norm", h);
  if (o.buffers == BufferConvention::kCurrent) {
    b.Buffer("model.rotary_emb.inv_freq", {a.rope / 2}, Dtype::kF32, false);
  }
  TaskHead(b, c, o, "model.embed_tokens");
  // Multi-token prediction layers: stored in the checkpoint, not loaded by transformers.
  uint64_t mtp_begin = m.tensors.size();
  for (uint64_t k = 0; k < mtp && !b.failed(); ++k) {
    const std::string l = Layer("model.layers", hp.num_layers + k);
    b.Embedding(l + ".embed_tokens", hp.vocab_size, h);
    b.RmsNorm(l + ".enorm", h);
    b.RmsNorm(l + ".hnorm", h);
    b.Linear(l + ".eh_proj", 2 * h, h, false);
    DecoderLayer(b, q, l, a, is_moe(hp.num_layers + k), v3_bias, shared);
    b.RmsNorm(l + ".shared_head.norm", h);
    b.Linear(l + ".shared_head.head", h, hp.vocab_size, false);
  }
  if (mtp > 0 && !b.failed()) {
    uint64_t bytes = 0;
    for (uint64_t t = mtp_begin; t < m.tensors.size(); ++t) {
      bytes += m.tensors[t].bytes;
      m.tensors[t].loaded = false;
    }
    m.notes.push_back(fmt::format(
        "{} multi-token-prediction layer(s) (model.layers.{}+, {} bytes) are stored in the "
        "checkpoint but not loaded by transformers", mtp, hp.num_layers, bytes));
  }
  NoteQuantization(b, q);
  m.no_split_patterns = {"model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace

Result<Model> BuildDeepseekV2(const HfConfig& c, const BuildOptions& o) {
  return BuildDeepseek(c, o, false);
}
Result<Model> BuildDeepseekV3(const HfConfig& c, const BuildOptions& o) {
  return BuildDeepseek(c, o, true);
}

}  // namespace memfit::arch
