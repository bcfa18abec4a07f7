// DeBERTa-v2/v3 (transformers' modeling_deberta_v2.py). deberta.embeddings.{word_embeddings
// [vocab, embedding_size], position_embeddings (when position_biased_input), token_type_embeddings
// (when type_vocab_size > 0), embed_proj (no bias, when embedding_size != hidden_size), LayerNorm}
// + the non-persistent int64 buffer position_ids [1, max_position_embeddings];
// deberta.encoder.layer.N.{attention.self.{query,key,value}_proj (+ pos_key_proj / pos_query_proj
// when relative attention does not share keys), attention.output.{dense, LayerNorm},
// intermediate.dense, output.{dense, LayerNorm}}; encoder.rel_embeddings [2 * pos_ebd_size, h]
// (relative_attention), encoder.LayerNorm ("layer_norm" in norm_rel_ebd), encoder.conv
// (conv_kernel_size > 0). Heads: ContextPooler + classifier, cls.predictions (tied), classifier,
// qa_outputs.

#include <string>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"

namespace memfit::arch {

Result<Model> BuildDebertaV2(const HfConfig& c, const BuildOptions& options) {
  const std::string cls = HeadClass(c, options, "DebertaV2", "DebertaV2Model");
  if (auto unknown = CheckHeadClass(
          c, cls, {"DebertaV2Model", "DebertaV2ForMaskedLM", "DebertaV2ForSequenceClassification",
                   "DebertaV2ForTokenClassification", "DebertaV2ForQuestionAnswering"})) {
    return std::move(*unknown);
  }
  const bool masked = cls == "DebertaV2ForMaskedLM";
  const bool sequence = cls == "DebertaV2ForSequenceClassification";
  const bool token = cls == "DebertaV2ForTokenClassification";
  const bool question = cls == "DebertaV2ForQuestionAnswering";
  ModelBuilder b(c);
  Model& m = b.model();
  m.architecture = cls;
  auto& hp = m.hp;
  ReadEncoderBasics(b, c);
  const uint64_t emb = Get(b, c.UintOr("embedding_size", hp.hidden_size));
  const uint64_t type_vocab = Get(b, c.UintOr("type_vocab_size", 0));
  const bool position_biased = Get(b, c.BoolOr("position_biased_input", true));
  const bool relative = Get(b, c.BoolOr("relative_attention", false));
  const bool share_att_key = Get(b, c.BoolOr("share_att_key", false));
  const std::string norm_rel_ebd = Get(b, c.StringOr("norm_rel_ebd", "none"));
  const uint64_t conv_kernel = Get(b, c.UintOr("conv_kernel_size", 0));
  const uint64_t conv_groups = Get(b, c.UintOr("conv_groups", 1));
  const uint64_t pooler_hidden = Get(b, c.UintOr("pooler_hidden_size", hp.hidden_size));
  // max_relative_positions and position_buckets may be -1 ("unset").
  int64_t max_relative = -1, buckets = -1;
  for (auto [key, out] : {std::pair{"max_relative_positions", &max_relative},
                          std::pair{"position_buckets", &buckets}}) {
    auto it = c.raw().find(key);
    if (it == c.raw().end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() > int64_t{1} << 30) {
      b.Fail(MakeError("{}: field \"{}\" must be an integer (-1 for unset)", c.where(), key));
      continue;
    }
    *out = it->get<int64_t>();
  }
  bool c2p = false, p2c = false;
  if (auto it = c.raw().find("pos_att_type"); it != c.raw().end()) {
    // A list (["p2c", "c2p"]) or a "p2c|c2p" string.
    std::string joined;
    if (it->is_array()) {
      for (const auto& v : *it) joined += (v.is_string() ? v.get<std::string>() : "") + "|";
    } else if (it->is_string()) {
      joined = it->get<std::string>();
    }
    c2p = joined.find("c2p") != std::string::npos;
    p2c = joined.find("p2c") != std::string::npos;
  }
  if (b.failed()) return b.Finish();
  hp.head_dim = Get(b, c.UintOr("attention_head_size", 0));
  if (hp.head_dim == 0) {
    hp.head_dim = DivideExact(b, c, hp.hidden_size, "hidden_size", hp.num_attention_heads,
                              "num_attention_heads");
  }
  if (b.failed()) return b.Finish();

  const bool is_base = cls == "DebertaV2Model";
  const std::string p = is_base ? "" : "deberta.";
  const uint64_t h = hp.hidden_size, inter = hp.intermediate_size;
  const uint64_t all_head = hp.num_attention_heads * hp.head_dim;
  const std::string word = p + "embeddings.word_embeddings.weight";
  b.Embedding(p + "embeddings.word_embeddings", hp.vocab_size, emb);
  if (position_biased) b.Embedding(p + "embeddings.position_embeddings", hp.max_position_embeddings, emb);
  if (type_vocab > 0) b.Embedding(p + "embeddings.token_type_embeddings", type_vocab, emb);
  if (emb != h) b.Linear(p + "embeddings.embed_proj", emb, h, false);
  b.LayerNorm(p + "embeddings.LayerNorm", h);
  b.Buffer(p + "embeddings.position_ids", {1, hp.max_position_embeddings}, Dtype::kI64, false);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer(p + "encoder.layer", i);
    b.Linear(l + ".attention.self.query_proj", h, all_head, true);
    b.Linear(l + ".attention.self.key_proj", h, all_head, true);
    b.Linear(l + ".attention.self.value_proj", h, all_head, true);
    if (relative && !share_att_key) {
      if (c2p) b.Linear(l + ".attention.self.pos_key_proj", h, all_head, true);
      if (p2c) b.Linear(l + ".attention.self.pos_query_proj", h, all_head, true);
    }
    b.Linear(l + ".attention.output.dense", h, h, true);
    b.LayerNorm(l + ".attention.output.LayerNorm", h);
    b.Linear(l + ".intermediate.dense", h, inter, true);
    b.Linear(l + ".output.dense", inter, h, true);
    b.LayerNorm(l + ".output.LayerNorm", h);
    hp.layers.push_back(DenseLayer(AttentionKind::kNone, hp.num_attention_heads, hp.head_dim, inter));
  }
  if (relative) {
    // DebertaV2Encoder: max_relative_positions < 1 -> max_position_embeddings; pos_ebd_size is
    // position_buckets when > 0.
    const uint64_t max_rel = max_relative < 1 ? hp.max_position_embeddings
                                              : static_cast<uint64_t>(max_relative);
    const uint64_t pos_ebd = buckets > 0 ? static_cast<uint64_t>(buckets) : max_rel;
    b.Embedding(p + "encoder.rel_embeddings", pos_ebd * 2, h);
  }
  if (norm_rel_ebd.find("layer_norm") != std::string::npos) b.LayerNorm(p + "encoder.LayerNorm", h);
  if (conv_kernel > 0) {
    b.Conv(p + "encoder.conv.conv", h, h, {conv_kernel}, true, conv_groups);
    b.LayerNorm(p + "encoder.conv.LayerNorm", h);
  }
  b.SetHead(true);
  const uint64_t labels = NumLabels(b, c);
  if (masked) {
    // DebertaV2PredictionHeadTransform maps hidden_size to embedding_size.
    b.Linear("cls.predictions.transform.dense", h, emb, true);
    b.LayerNorm("cls.predictions.transform.LayerNorm", emb);
    b.Tied("cls.predictions.decoder.weight", {hp.vocab_size, emb}, word);
    b.Param("cls.predictions.bias", {hp.vocab_size});
    b.Tied("cls.predictions.decoder.bias", {hp.vocab_size}, "cls.predictions.bias");
  } else if (sequence) {
    b.Linear("pooler.dense", pooler_hidden, pooler_hidden, true);
    b.Linear("classifier", pooler_hidden, labels, true);
  } else if (token) {
    b.Linear("classifier", h, labels, true);
  } else if (question) {
    b.Linear("qa_outputs", h, labels, true);
  }
  b.SetHead(false);
  // DebertaV2PreTrainedModel (4.42) declares no _no_split_modules: leaf blocks.
  m.base_model_prefix = p;
  return b.Finish();
}

}  // namespace memfit::arch
