// T5 family: t5, mt5, umt5 (transformers' modeling_t5.py / modeling_mt5.py / modeling_umt5.py).
// shared [vocab, d_model]; encoder/decoder.embed_tokens share shared's module (tied, counted once);
// {encoder,decoder}.block.N.layer.0.SelfAttention.{q,k,v,o} (no biases) + relative_attention_bias
// [relative_attention_num_buckets, num_heads] in block 0 (every block for umt5), layer_norm
// (RMS, weight only); the decoder's layer.1.EncDecAttention; DenseReluDense.{wi | wi_0, wi_1 for
// gated-*, wo}; {encoder,decoder}.final_layer_norm; lm_head (tied to shared when
// tie_word_embeddings: t5 defaults to true, mt5 to false). No buffers.

#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"

namespace memfit::arch {
namespace {

struct T5Spec {
  std::string_view type_prefix;  // "T5", "MT5", "UMT5"
  bool tie_default = true;
  bool bias_every_layer = false;  // umt5: relative_attention_bias in every self-attention
};

Result<Model> BuildT5Like(const HfConfig& c, const BuildOptions& options, const T5Spec& spec) {
  const std::string t(spec.type_prefix);
  const std::string cls = HeadClass(c, options, t, t + "Model");
  const std::string generation_class = t + "ForConditionalGeneration";
  const std::string encoder_class = t + "EncoderModel";
  if (auto unknown = CheckHeadClass(c, cls, {t + "Model", generation_class, encoder_class})) {
    return std::move(*unknown);
  }
  const bool encoder_only = cls == encoder_class;
  ModelBuilder b(c);
  Model& m = b.model();
  m.architecture = cls;
  auto& hp = m.hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("d_model"));
  hp.num_encoder_layers = Get(b, c.Uint("num_layers"));
  hp.num_layers = Get(b, c.UintOr("num_decoder_layers", hp.num_encoder_layers));
  hp.num_attention_heads = Get(b, c.Uint("num_heads"));
  hp.num_kv_heads = hp.num_attention_heads;
  hp.head_dim = Get(b, c.Uint("d_kv"));
  hp.intermediate_size = Get(b, c.Uint("d_ff"));
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", spec.tie_default));
  hp.max_position_embeddings = Get(b, c.UintOr("n_positions", 0));  // relative positions: no limit
  const uint64_t buckets = Get(b, c.UintOr("relative_attention_num_buckets", 32));
  const std::string ff = Get(b, c.StringOr("feed_forward_proj", "relu"));
  // T5Config "dropout_rate" (default 0.1): every sublayer's output, the attention probabilities,
  // the embeddings, each stack's final output and the MLP's activation (modeling_t5.py
  // T5LayerFF, T5Attention, T5Stack, T5DenseActDense; the last is a training estimator table
  // row, estimate/activations.cc MlpActivationDropout).
  hp.hidden_dropout = hp.attention_dropout = Get(b, c.NumberOr("dropout_rate", 0.1));
  hp.norm = "rmsnorm";
  hp.is_encoder_decoder = !encoder_only;
  if (b.failed()) return b.Finish();
  // T5Config: "gated-gelu" -> gated, act "gelu_new"; otherwise the activation's name.
  hp.gated_mlp = ff.starts_with("gated-");
  hp.activation = hp.gated_mlp ? ff.substr(6) : ff;
  if (hp.activation == "gelu" && hp.gated_mlp) hp.activation = "gelu_new";
  if (hp.activation.empty() || (ff.find('-') != std::string::npos && !hp.gated_mlp)) {
    b.Fail(MakeError("{}: \"feed_forward_proj\" = \"{}\" is not \"<act>\" or \"gated-<act>\"",
                     c.where(), ff));
  }
  if (hp.vocab_size == 0 || hp.hidden_size == 0 || hp.num_attention_heads == 0 || hp.head_dim == 0) {
    b.Fail(MakeError("{}: \"vocab_size\", \"d_model\", \"num_heads\" and \"d_kv\" must be positive",
                     c.where()));
  }
  if (b.failed()) return b.Finish();

  const uint64_t d = hp.hidden_size, inner = hp.num_attention_heads * hp.head_dim,
                 dff = hp.intermediate_size;
  auto attention = [&](const std::string& prefix, bool relative_bias) {
    for (const char* proj : {"q", "k", "v"}) b.Linear(prefix + "." + proj, d, inner, false);
    b.Linear(prefix + ".o", inner, d, false);
    if (relative_bias) {
      b.Embedding(prefix + ".relative_attention_bias", buckets, hp.num_attention_heads);
    }
  };
  auto feed_forward = [&](const std::string& prefix) {
    if (hp.gated_mlp) {
      b.Linear(prefix + ".DenseReluDense.wi_0", d, dff, false);
      b.Linear(prefix + ".DenseReluDense.wi_1", d, dff, false);
    } else {
      b.Linear(prefix + ".DenseReluDense.wi", d, dff, false);
    }
    b.Linear(prefix + ".DenseReluDense.wo", dff, d, false);
    b.RmsNorm(prefix + ".layer_norm", d);
  };
  b.Embedding("shared", hp.vocab_size, d);
  b.Tied("encoder.embed_tokens.weight", {hp.vocab_size, d}, "shared.weight");
  for (uint64_t i = 0; i < hp.num_encoder_layers && !b.failed(); ++i) {
    const std::string l = Layer("encoder.block", i);
    attention(l + ".layer.0.SelfAttention", i == 0 || spec.bias_every_layer);
    b.RmsNorm(l + ".layer.0.layer_norm", d);
    feed_forward(l + ".layer.1");
  }
  b.RmsNorm("encoder.final_layer_norm", d);
  if (!encoder_only) {
    b.Tied("decoder.embed_tokens.weight", {hp.vocab_size, d}, "shared.weight");
    for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
      const std::string l = Layer("decoder.block", i);
      attention(l + ".layer.0.SelfAttention", i == 0 || spec.bias_every_layer);
      b.RmsNorm(l + ".layer.0.layer_norm", d);
      attention(l + ".layer.1.EncDecAttention", false);
      b.RmsNorm(l + ".layer.1.layer_norm", d);
      feed_forward(l + ".layer.2");
      LayerInfo info = DenseLayer(AttentionKind::kFull, hp.num_attention_heads, hp.head_dim, dff);
      info.cross_attention = true;
      hp.layers.push_back(info);
    }
    b.RmsNorm("decoder.final_layer_norm", d);
  } else {
    hp.num_layers = hp.num_encoder_layers;
    for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
      hp.layers.push_back(DenseLayer(AttentionKind::kNone, hp.num_attention_heads, hp.head_dim, dff));
    }
    hp.num_encoder_layers = 0;
  }
  if (cls == generation_class) {
    b.SetHead(true);
    if (hp.tie_word_embeddings) {
      b.Tied("lm_head.weight", {hp.vocab_size, d}, "shared.weight");
    } else {
      b.Linear("lm_head", d, hp.vocab_size, false);
    }
    b.SetHead(false);
  }
  // _no_split_modules = ["T5Block"] (MT5Block, UMT5Block); the modules are not prefixed.
  m.no_split_patterns = {"encoder.block.*", "decoder.block.*"};
  return b.Finish();
}

}  // namespace

Result<Model> BuildT5(const HfConfig& c, const BuildOptions& o) {
  return BuildT5Like(c, o, {.type_prefix = "T5", .tie_default = true});
}
Result<Model> BuildMt5(const HfConfig& c, const BuildOptions& o) {
  return BuildT5Like(c, o, {.type_prefix = "MT5", .tie_default = false});
}
Result<Model> BuildUmt5(const HfConfig& c, const BuildOptions& o) {
  return BuildT5Like(c, o, {.type_prefix = "UMT5", .tie_default = true, .bias_every_layer = true});
}

}  // namespace memfit::arch
