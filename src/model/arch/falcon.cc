// Falcon (tiiuae/falcon-7b/40b/180b, Falcon2-11B, and the original RefinedWeb / RefinedWebModel
// configs of the custom-code era): transformers' modeling_falcon.py.
// transformer.{word_embeddings, h.N.{[ln_attn, ln_mlp] | [input_layernorm,
// post_attention_layernorm], self_attention.{query_key_value, dense}, mlp.{dense_h_to_4h,
// dense_4h_to_h}}, ln_f}, lm_head tied to word_embeddings.
// Layouts: new_decoder_architecture (40B/180B: grouped-query, num_kv_heads key and value heads,
// two parallel norms), multi_query (7B: one key/value head), or classic multi-head. "bias" applies
// to every Linear; "alibi" replaces rotary (no buffers either way in current transformers beyond one
// rotary inv_freq). 4.42 buffers (non-persistent, float32): per attention module
// rotary_emb.{inv_freq [head_dim / 2], cos_cached, sin_cached [max_position_embeddings, head_dim]}
// unless alibi.

#include "model/arch/builder_kit.h"
#include "model/arch/decoder_heads.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"

namespace memfit::arch {

Result<Model> BuildFalcon(const HfConfig& c, const BuildOptions& options) {
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  const std::string type = c.model_type();
  // RefinedWeb (40B) always had the new decoder layout; RefinedWebModel (7B) the old one.
  const bool new_arch = Get(b, c.BoolOr("new_decoder_architecture", type == "RefinedWeb"));
  const bool multi_query = Get(b, c.BoolOr("multi_query", true));
  const bool parallel_attn = Get(b, c.BoolOr("parallel_attn", true));
  const bool bias = Get(b, c.BoolOr("bias", false));
  const bool alibi = Get(b, c.BoolOr("alibi", false));
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.UintAny({"num_hidden_layers", "n_layer"}));
  hp.num_attention_heads = Get(b, c.UintAny({"num_attention_heads", "n_head"}));
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 2048));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", true));
  hp.activation = Get(b, c.StringOr("activation", "gelu"));
  hp.norm = "layernorm";
  const HeadKind head = ResolveHead(b, c, options, "falcon");
  const uint64_t labels = NumLabels(b, c);
  if (b.failed()) return b.Finish();
  hp.head_dim = DivideExact(b, c, hp.hidden_size, "hidden_size", hp.num_attention_heads,
                            "num_attention_heads");
  hp.intermediate_size = Get(b, c.UintOr("ffn_hidden_size", 4 * hp.hidden_size));
  if (new_arch) {
    if (c.Has("num_kv_heads")) {
      hp.num_kv_heads = Get(b, c.Uint("num_kv_heads"));
    } else {
      hp.num_kv_heads = Get(b, c.UintOr("n_head_kv", hp.num_attention_heads));
    }
  } else {
    hp.num_kv_heads = multi_query ? 1 : hp.num_attention_heads;
  }
  // 4.42: two parallel norms (ln_attn, ln_mlp) when the new layout leaves num_ln_in_parallel_attn
  // unset or sets it to 2; one input_layernorm otherwise; sequential blocks have two norms.
  const uint64_t parallel_norms = Get(b, c.UintOr("num_ln_in_parallel_attn", new_arch ? 2 : 1));
  if (b.failed()) return b.Finish();
  if (hp.num_kv_heads == 0 || hp.num_attention_heads % hp.num_kv_heads != 0) {
    b.Fail(MakeError("{}: \"num_attention_heads\" = {} is not a multiple of \"num_kv_heads\" = {}",
                     c.where(), hp.num_attention_heads, hp.num_kv_heads));
    return b.Finish();
  }

  const uint64_t h = hp.hidden_size, hd = hp.head_dim, pos = hp.max_position_embeddings;
  const uint64_t qkv = new_arch ? (2 * hp.num_kv_heads + hp.num_attention_heads) * hd
                       : multi_query ? h + 2 * hd
                                     : 3 * h;
  b.Embedding("transformer.word_embeddings", hp.vocab_size, h);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("transformer.h", i);
    if (!parallel_attn) {
      b.LayerNorm(l + ".post_attention_layernorm", h);
      b.LayerNorm(l + ".input_layernorm", h);
    } else if (parallel_norms == 2) {
      b.LayerNorm(l + ".ln_attn", h);
      b.LayerNorm(l + ".ln_mlp", h);
    } else {
      b.LayerNorm(l + ".input_layernorm", h);
    }
    b.Linear(l + ".self_attention.query_key_value", h, qkv, bias);
    b.Linear(l + ".self_attention.dense", h, h, bias);
    if (!alibi && options.buffers == BufferConvention::kTransformers442) {
      const std::string r = l + ".self_attention.rotary_emb";
      b.Buffer(r + ".inv_freq", {hd / 2}, Dtype::kF32, false);
      b.Buffer(r + ".cos_cached", {pos, hd}, Dtype::kF32, false);
      b.Buffer(r + ".sin_cached", {pos, hd}, Dtype::kF32, false);
    }
    b.Linear(l + ".mlp.dense_h_to_4h", h, hp.intermediate_size, bias);
    b.Linear(l + ".mlp.dense_4h_to_h", hp.intermediate_size, h, bias);
    hp.layers.push_back(DenseAttentionInfo(hp, hp.intermediate_size));
  }
  b.LayerNorm("transformer.ln_f", h);
  if (!alibi && options.buffers == BufferConvention::kCurrent) {
    b.Buffer("transformer.rotary_emb.inv_freq", {hd / 2}, Dtype::kF32, false);
  }
  GptFamilyHead(b, c, head, {.family = "falcon", .embed = "transformer.word_embeddings"}, labels);
  const bool tied = head == HeadKind::kCausalLm && hp.tie_word_embeddings;
  if (tied && TransformersVersionBefore(c, 4, 28) && !b.failed()) {
    // The tiiuae .bin shards (custom-code era, transformers 4.27) hold lm_head.weight as a
    // second copy of the tied embedding: stored twice, resident once.
    m.tensors.back().stored = true;
    m.assumptions.push_back(
        "a Falcon checkpoint saved by transformers < 4.28 is assumed to store the tied "
        "lm_head.weight a second time (as tiiuae's .bin shards do); it is loaded once");
  }
  m.no_split_patterns = {"transformer.h.*"};  // _no_split_modules = ["FalconDecoderLayer"]
  m.base_model_prefix = "transformer.";
  return b.Finish();
}

}  // namespace memfit::arch
