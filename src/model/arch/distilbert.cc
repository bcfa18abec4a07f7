// DistilBERT: transformers' modeling_distilbert.py. distilbert.embeddings.{word_embeddings,
// position_embeddings (a parameter also when sinusoidal_pos_embds), LayerNorm} + the
// non-persistent int64 [1, max_position_embeddings] buffer position_ids; distilbert.transformer.
// layer.N.{attention.{q,k,v,out}_lin, sa_layer_norm, ffn.lin1, ffn.lin2, output_layer_norm}.
// No pooler. Heads: vocab_transform/vocab_layer_norm/vocab_projector (weight tied to the word
// embeddings, own bias), pre_classifier + classifier, classifier, qa_outputs.

#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"

namespace memfit::arch {

Result<Model> BuildDistilBert(const HfConfig& c, const BuildOptions& options) {
  const std::string cls = HeadClass(c, options, "DistilBert", "DistilBertModel");
  if (auto unknown = CheckHeadClass(
          c, cls, {"DistilBertModel", "DistilBertForMaskedLM",
                   "DistilBertForSequenceClassification", "DistilBertForTokenClassification",
                   "DistilBertForQuestionAnswering", "DistilBertForMultipleChoice"})) {
    return std::move(*unknown);
  }
  ModelBuilder b(c);
  Model& m = b.model();
  m.architecture = cls;
  auto& hp = m.hp;
  ReadEncoderBasics(b, c, EncoderKeys{.hidden = "dim",
                                       .layers = "n_layers",
                                       .heads = "n_heads",
                                       .intermediate = "hidden_dim",
                                       .activation = "activation"});
  if (b.failed()) return b.Finish();
  hp.head_dim = DivideExact(b, c, hp.hidden_size, "dim", hp.num_attention_heads, "n_heads");
  if (b.failed()) return b.Finish();

  const bool is_base = cls == "DistilBertModel";
  const std::string p = is_base ? "" : "distilbert.";
  const uint64_t d = hp.hidden_size, inter = hp.intermediate_size;
  const std::string word = p + "embeddings.word_embeddings.weight";
  b.Embedding(p + "embeddings.word_embeddings", hp.vocab_size, d);
  b.Embedding(p + "embeddings.position_embeddings", hp.max_position_embeddings, d);
  b.LayerNorm(p + "embeddings.LayerNorm", d);
  b.Buffer(p + "embeddings.position_ids", {1, hp.max_position_embeddings}, Dtype::kI64, false);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    const std::string l = Layer(p + "transformer.layer", i);
    for (const char* proj : {"q_lin", "k_lin", "v_lin", "out_lin"}) {
      b.Linear(l + ".attention." + proj, d, d, true);
    }
    b.LayerNorm(l + ".sa_layer_norm", d);
    b.Linear(l + ".ffn.lin1", d, inter, true);
    b.Linear(l + ".ffn.lin2", inter, d, true);
    b.LayerNorm(l + ".output_layer_norm", d);
    hp.layers.push_back(DenseLayer(AttentionKind::kNone, hp.num_attention_heads, hp.head_dim, inter));
  }
  b.SetHead(true);
  const uint64_t labels = NumLabels(b, c);
  if (cls == "DistilBertForMaskedLM") {
    b.Linear("vocab_transform", d, d, true);
    b.LayerNorm("vocab_layer_norm", d);
    b.Tied("vocab_projector.weight", {hp.vocab_size, d}, word);
    b.Param("vocab_projector.bias", {hp.vocab_size});
  } else if (cls == "DistilBertForSequenceClassification") {
    b.Linear("pre_classifier", d, d, true);
    b.Linear("classifier", d, labels, true);
  } else if (cls == "DistilBertForMultipleChoice") {
    b.Linear("pre_classifier", d, d, true);
    b.Linear("classifier", d, 1, true);
  } else if (cls == "DistilBertForTokenClassification") {
    b.Linear("classifier", d, labels, true);
  } else if (cls == "DistilBertForQuestionAnswering") {
    if (labels != 2) {
      b.Fail(MakeError("{}: DistilBertForQuestionAnswering needs \"num_labels\" = 2, not {}",
                       c.where(), labels));
    }
    b.Linear("qa_outputs", d, labels, true);
  }
  b.SetHead(false);
  // DistilBertPreTrainedModel (4.42) declares no _no_split_modules: accelerate splits to leaves.
  m.base_model_prefix = p;
  return b.Finish();
}

}  // namespace memfit::arch
