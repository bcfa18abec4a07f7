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
  if (auto unknown = CheckHeadClass(c, cls, {t + "Model", t + "ForConditionalGeneration",
                                             t + "ForSequenceClassification",
                                             t + "ForQuestionAnswering"})) {
    return std::move(*unknown);
  }
  ModelBuilder b(c);
  Model& m = b.model();
  m.architecture = cls;
  auto& hp = m.hp;
  hp.vocab_size = Get(b, c.Uint("vocab_size"));
  hp.hidden_size = Get(b, c.Uint("d_model"));
  const BartEncoderSizes enc = ReadBartLayerSizes(b, c);
  hp.max_position_embeddings = Get(b, c.UintOr("max_position_embeddings", 1024));
  hp.encoder_max_positions = hp.max_position_embeddings;
  ReadBartTail(b, c, enc.heads);
  if (b.failed()) return b.Finish();

  const std::string p = cls == t + "Model" ? "" : "model.";
  const uint64_t d = hp.hidden_size;
  const std::string shared = p + "shared.weight";
  auto stack = [&](const std::string& side, uint64_t layers, uint64_t ffn, bool decoder) {
    const std::string s = p + side;
    b.Tied(s + ".embed_tokens.weight", {hp.vocab_size, d}, shared);
    MarkTieBrokenOnMeta(b);
    b.Embedding(s + ".embed_positions", hp.max_position_embeddings + 2, d);
    for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
      EmitBartLayer(b, Layer(s + ".layers", i), d, ffn, decoder, /*k_bias=*/true);
    }
    b.LayerNorm(s + ".layernorm_embedding", d);
    if (mbart) b.LayerNorm(s + ".layer_norm", d);
  };
  b.Embedding(p + "shared", hp.vocab_size, d);
  stack("encoder", hp.num_encoder_layers, enc.ffn, false);
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
