#include "model/arch/mla_kit.h"

#include "formats/hf_config_json.h"

namespace memfit::arch {

void ReadMlaDecoderBasics(ModelBuilder& b, const HfConfig& c, const MlaBasicsKeys& keys) {
  auto& hp = b.model().hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.Uint(keys.layers));
  hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  hp.num_kv_heads = Get(b, c.UintOr("num_key_value_heads", hp.num_attention_heads));
  hp.intermediate_size = Get(b, c.Uint(keys.intermediate));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 0));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", keys.tie));
  hp.activation = Get(b, c.StringOr("hidden_act", "silu"));
  hp.norm = "rmsnorm";
  hp.gated_mlp = true;
}

MlaDims ReadMlaDims(ModelBuilder& b, const HfConfig& c, uint64_t heads, uint64_t v_default) {
  MlaDims d;
  d.heads = heads;
  d.q_lora = Get(b, c.UintOr("q_lora_rank", 0));  // null: DeepSeek-V2-Lite's plain q_proj
  d.kv_lora = Get(b, c.Uint("kv_lora_rank"));
  d.nope = Get(b, c.Uint("qk_nope_head_dim"));
  d.rope = Get(b, c.Uint("qk_rope_head_dim"));
  d.v = Get(b, v_default > 0 ? c.UintOr("v_head_dim", v_default) : c.Uint("v_head_dim"));
  return d;
}

void CheckMlaDims(ModelBuilder& b, const HfConfig& c, const MlaDims& d) {
  if (b.failed()) return;
  if (d.heads == 0 || d.kv_lora == 0 || d.nope + d.rope == 0 || d.v == 0) {
    b.Fail(MakeError("{}: \"num_attention_heads\", \"kv_lora_rank\", \"qk_nope_head_dim\" + "
                     "\"qk_rope_head_dim\" and \"v_head_dim\" must be positive", c.where()));
  }
}

void SetMlaHyperparameters(Hyperparameters& hp, const MlaDims& d) {
  hp.head_dim = d.nope + d.rope;
  hp.q_lora_rank = d.q_lora;
  hp.kv_lora_rank = d.kv_lora;
  hp.qk_nope_head_dim = d.nope;
  hp.qk_rope_head_dim = d.rope;
  hp.v_head_dim = d.v;
}

LayerInfo MlaLayerInfo(const Hyperparameters& hp, const MlaDims& d) {
  return LayerInfo{.attention = AttentionKind::kMla, .num_heads = d.heads,
                   .num_kv_heads = hp.num_kv_heads, .head_dim_k = d.nope + d.rope,
                   .head_dim_v = d.v};
}

void EmitMla(ModelBuilder& b, const Quantization& q, const std::string& attn, const MlaDims& d,
             bool bias) {
  const uint64_t h = b.model().hp.hidden_size;
  const uint64_t qk = MulDims(b, d.heads, d.nope + d.rope, "heads x qk head dim");
  if (d.q_lora > 0) {
    QLinear(b, q, attn + ".q_a_proj", h, d.q_lora, bias);
    b.RmsNorm(attn + ".q_a_layernorm", d.q_lora);
    QLinear(b, q, attn + ".q_b_proj", d.q_lora, qk, false);
  } else {
    QLinear(b, q, attn + ".q_proj", h, qk, false);
  }
  QLinear(b, q, attn + ".kv_a_proj_with_mqa", h, d.kv_lora + d.rope, bias);
  b.RmsNorm(attn + ".kv_a_layernorm", d.kv_lora);
  QLinear(b, q, attn + ".kv_b_proj", d.kv_lora,
          MulDims(b, d.heads, d.nope + d.v, "heads x (qk_nope_head_dim + v_head_dim)"), false);
  QLinear(b, q, attn + ".o_proj", MulDims(b, d.heads, d.v, "heads x v_head_dim"), h, bias);
}

MoeSchedule ReadMoeSchedule(ModelBuilder& b, const HfConfig& c, uint64_t first_dense_default) {
  MoeSchedule s;
  s.first_dense = Get(b, c.UintOr("first_k_dense_replace", first_dense_default));
  s.freq = Get(b, c.UintOr("moe_layer_freq", 1));
  s.mtp = Get(b, c.UintOr("num_nextn_predict_layers", 0));
  if (!b.failed() && s.freq == 0) {
    b.Fail(MakeError("{}: field \"moe_layer_freq\" must not be zero", c.where()));
    s.freq = 1;
  }
  return s;
}

}  // namespace memfit::arch
