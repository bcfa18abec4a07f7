// BART and mBART (transformers' modeling_bart.py / modeling_mbart.py). [model.]shared; encoder and
// decoder each with embed_tokens (shares shared's weight: assigned as a parameter, so accelerate's
// init_empty_weights breaks the tie and counts it again), embed_positions [max_position_embeddings
// + 2, d_model] (the learned positions are offset by 2), layers.N.{self_attn.{k,v,q,out}_proj,
// self_attn_layer_norm, [encoder_attn.*, encoder_attn_layer_norm,] fc1, fc2, final_layer_norm},
// layernorm_embedding, and for mBART a final layer_norm. BartForConditionalGeneration adds the
// persistent buffer final_logits_bias [1, vocab] and lm_head (tied to shared).

#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"

namespace memfit::arch {
namespace {

Result<Model> BuildBartLike(const HfConfig& c, const BuildOptions& options, bool mbart) {
  const std::string t = mbart ? "MBart" : "Bart";
  const std::string cls = HeadClass(c, options, t, t + "Model");
  const bool generation = cls == t + "ForConditionalGeneration";
  const bool sequence = cls == t + "ForSequenceClassification";
  const bool question = cls == t + "ForQuestionAnswering";
  if (cls != t + "Model" && !generation && !sequence && !question) {
    return UnknownHead(c, cls, t + "Model, " + t + "ForConditionalGeneration, " + t +
                                   "ForSequenceClassification, " + t + "ForQuestionAnswering");
  }
  ModelBuilder b(c);
  Model& m = b.model();
  m.architecture = cls;
  auto& hp = m.hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("d_model"));
  hp.num_encoder_layers = Get(b, c.Uint("encoder_layers"));
  hp.num_layers = Get(b, c.Uint("decoder_layers"));
  const uint64_t enc_heads = Get(b, c.Uint("encoder_attention_heads"));
  hp.num_attention_heads = Get(b, c.Uint("decoder_attention_heads"));
  hp.num_kv_heads = hp.num_attention_heads;
  const uint64_t enc_ffn = Get(b, c.Uint("encoder_ffn_dim"));
  hp.intermediate_size = Get(b, c.Uint("decoder_ffn_dim"));
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 1024));
  hp.encoder_max_positions = hp.max_position_embeddings;
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", true));
  hp.activation = Get(b, c.StringOr("activation_function", "gelu"));
  hp.norm = "layernorm";
  hp.is_encoder_decoder = true;
  if (b.failed()) return b.Finish();
  DivideExact(b, c, hp.hidden_size, "d_model", enc_heads, "encoder_attention_heads");
  hp.head_dim = DivideExact(b, c, hp.hidden_size, "d_model", hp.num_attention_heads,
                            "decoder_attention_heads");
  if (b.failed()) return b.Finish();

  const std::string p = cls == t + "Model" ? "" : "model.";
  const uint64_t d = hp.hidden_size;
  const std::string shared = p + "shared.weight";
  auto attention = [&](const std::string& prefix) {
    for (const char* proj : {"k_proj", "v_proj", "q_proj", "out_proj"}) {
      b.Linear(prefix + "." + proj, d, d, true);
    }
  };
  auto stack = [&](const std::string& side, uint64_t layers, uint64_t ffn, bool decoder) {
    const std::string s = p + side;
    b.Tied(s + ".embed_tokens.weight", {hp.vocab_size, d}, shared);
    MarkTieBrokenOnMeta(b);
    b.Embedding(s + ".embed_positions", hp.max_position_embeddings + 2, d);
    for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
      const std::string l = Layer(s + ".layers", i);
      attention(l + ".self_attn");
      b.LayerNorm(l + ".self_attn_layer_norm", d);
      if (decoder) {
        attention(l + ".encoder_attn");
        b.LayerNorm(l + ".encoder_attn_layer_norm", d);
        LayerInfo info = DenseLayer(AttentionKind::kFull, hp.num_attention_heads, hp.head_dim, ffn);
        info.cross_attention = true;
        hp.layers.push_back(info);
      }
      b.Linear(l + ".fc1", d, ffn, true);
      b.Linear(l + ".fc2", ffn, d, true);
      b.LayerNorm(l + ".final_layer_norm", d);
    }
    b.LayerNorm(s + ".layernorm_embedding", d);
    if (mbart) b.LayerNorm(s + ".layer_norm", d);
  };
  b.Embedding(p + "shared", hp.vocab_size, d);
  stack("encoder", hp.num_encoder_layers, enc_ffn, false);
  stack("decoder", hp.num_layers, hp.intermediate_size, true);
  b.SetHead(true);
  if (generation) {
    b.Buffer("final_logits_bias", {1, hp.vocab_size}, b.dtype(), true);
    if (hp.tie_word_embeddings) {
      b.Tied("lm_head.weight", {hp.vocab_size, d}, shared);
    } else {
      b.Linear("lm_head", d, hp.vocab_size, false);
    }
  } else if (sequence) {
    b.Linear("classification_head.dense", d, d, true);
    b.Linear("classification_head.out_proj", d, NumLabels(b, c), true);
  } else if (question) {
    b.Linear("qa_outputs", d, 2, true);
  }
  b.SetHead(false);
  // _no_split_modules = ["BartEncoderLayer", "BartDecoderLayer"] (MBart likewise).
  m.no_split_patterns = {p + "encoder.layers.*", p + "decoder.layers.*"};
  m.base_model_prefix = p;
  return b.Finish();
}

}  // namespace

Result<Model> BuildBart(const HfConfig& c, const BuildOptions& o) { return BuildBartLike(c, o, false); }
Result<Model> BuildMbart(const HfConfig& c, const BuildOptions& o) { return BuildBartLike(c, o, true); }

}  // namespace memfit::arch
