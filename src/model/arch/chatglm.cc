// ChatGLM2/3 and GLM-4 (model_type "chatglm", remote code modeling_chatglm.py): transformer.
// embedding.word_embeddings [padded_vocab_size, h]; a persistent rotary_pos_emb.inv_freq
// [kv_channels / 4] in the config's dtype; per layer transformer.encoder.layers.N:
// input_layernorm, self_attention.query_key_value [nh x kv + 2 x groups x kv, h] (bias with
// add_qkv_bias or add_bias_linear), self_attention.dense, post_attention_layernorm, fused SwiGLU
// mlp.dense_h_to_4h [2 x ffn, h], mlp.dense_4h_to_h; encoder.final_layernorm; output_layer.
// RMSNorm with "rmsnorm", else LayerNorm. The v1 layout (ChatGLM-6B: no "ffn_hidden_size") goes
// to the generic builder.

#include "model/arch/builder_kit.h"
#include "model/arch/decoder_kit.h"
#include "model/arch/families.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

Result<Model> BuildChatGlm(const HfConfig& c, const BuildOptions& options) {
  if (!c.Has("ffn_hidden_size")) {
    return MakeError(
        "{}: the ChatGLM-6B (v1) layout (no \"ffn_hidden_size\") is not built "
        "exactly from config.json",
        c.where());
  }
  ModelBuilder b(c);
  Model& m = b.model();
  auto& hp = m.hp;
  hp.vocab_size = Get(b, c.UintOr("padded_vocab_size", Get(b, c.UintOr("vocab_size", 0))));
  hp.hidden_size = Get(b, c.Uint("hidden_size"));
  hp.num_layers = Get(b, c.UintOr("num_layers", Get(b, c.UintOr("num_hidden_layers", 0))));
  hp.num_attention_heads = Get(b, c.Uint("num_attention_heads"));
  hp.intermediate_size = Get(b, c.Uint("ffn_hidden_size"));
  hp.max_position_embeddings = Get(b, c.UintOr("seq_length", 0));
  const bool mqa = Get(b, c.BoolOr("multi_query_attention", false));
  const uint64_t groups = mqa ? Get(b, c.UintOr("multi_query_group_num", 1)) : 0;
  const bool qkv_bias = Get(b, c.BoolOr("add_qkv_bias", false));
  const bool linear_bias = Get(b, c.BoolOr("add_bias_linear", false));
  const bool rms = Get(b, c.BoolOr("rmsnorm", true));
  const bool final_norm = Get(b, c.BoolOr("post_layer_norm", true));
  if (b.failed()) return b.Finish();
  if (hp.vocab_size == 0 || hp.num_layers == 0) {
    return MakeError("{}: \"padded_vocab_size\" (or \"vocab_size\") and \"num_layers\" must be set",
                     c.where());
  }
  const uint64_t h = hp.hidden_size, nh = hp.num_attention_heads, ffn = hp.intermediate_size;
  const uint64_t kv_default = DivideExact(b, c, h, "hidden_size", nh, "num_attention_heads");
  const uint64_t kv = Get(b, c.UintOr("kv_channels", kv_default));
  if (mqa && (groups == 0 || nh % groups != 0)) {
    b.Fail(MakeError("{}: \"multi_query_group_num\" = {} must divide \"num_attention_heads\" = {}",
                     c.where(), groups, nh));
  }
  if (b.failed()) return b.Finish();
  hp.num_kv_heads = mqa ? groups : nh;
  hp.head_dim = kv;
  hp.norm = rms ? "rmsnorm" : "layernorm";
  hp.gated_mlp = true;
  hp.activation = "swiglu";
  Quantization q = ReadQuantization(b, c, options);
  if (b.failed()) return b.Finish();
  auto norm = [&](const std::string& name) {
    if (rms)
      b.RmsNorm(name, h);
    else
      b.LayerNorm(name, h);
  };
  const uint64_t q_width = MulDims(b, nh, kv, "num_attention_heads x kv_channels");
  const uint64_t qkv_width = q_width + 2 * hp.num_kv_heads * kv;
  b.Embedding("transformer.embedding.word_embeddings", hp.vocab_size, h);
  b.Buffer("transformer.rotary_pos_emb.inv_freq", {kv / 4}, b.dtype(), true);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer("transformer.encoder.layers", i);
    norm(l + ".input_layernorm");
    QLinear(b, q, l + ".self_attention.query_key_value", h, qkv_width, qkv_bias || linear_bias);
    QLinear(b, q, l + ".self_attention.dense", q_width, h, linear_bias);
    norm(l + ".post_attention_layernorm");
    QLinear(b, q, l + ".mlp.dense_h_to_4h", h, 2 * ffn, linear_bias);
    QLinear(b, q, l + ".mlp.dense_4h_to_h", ffn, h, linear_bias);
    hp.layers.push_back(DenseAttentionInfo(hp, ffn));
  }
  if (final_norm) norm("transformer.encoder.final_layernorm");
  LmHead(b, "transformer.embedding.word_embeddings", false, "transformer.output_layer");
  NoteQuantization(b, q);
  m.no_split_patterns = {"transformer.encoder.layers.*"};
  m.base_model_prefix = "transformer.";
  return b.Finish();
}

}  // namespace memfit::arch
