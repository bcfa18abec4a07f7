// BERT-style encoders: bert, roberta, xlm-roberta, electra. Names and shapes follow transformers'
// modeling_bert.py / modeling_roberta.py / modeling_electra.py (4.42 and current agree):
// <prefix>.embeddings.{word,position,token_type}_embeddings + LayerNorm (+ the non-persistent int64
// [1, max_position_embeddings] buffers position_ids and token_type_ids), <prefix>.encoder.layer.N.
// {attention.self.{query,key,value}, attention.output.{dense,LayerNorm}, intermediate.dense,
// output.{dense,LayerNorm}}, an optional pooler, and the task heads of each family.

#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"

namespace memfit::arch {
namespace {

enum class Family : uint8_t { kBert, kRoberta, kXlmRoberta, kElectra };

struct Names {
  std::string_view type_prefix;  // "Bert", "Roberta", "XLMRoberta", "Electra"
  std::string_view prefix;       // base_model_prefix: "bert", "roberta", "electra"
};

Names NamesOf(Family f) {
  switch (f) {
    case Family::kBert: return {"Bert", "bert"};
    case Family::kRoberta: return {"Roberta", "roberta"};
    case Family::kXlmRoberta: return {"XLMRoberta", "roberta"};
    case Family::kElectra: return {"Electra", "electra"};
  }
  return {"Bert", "bert"};
}

// What a head class holds on top of the encoder.
enum class Head : uint8_t {
  kNone,            // the base model
  kMaskedLm,        // bert: cls.predictions; roberta: lm_head; electra: generator head
  kPreTraining,     // bert: cls.predictions + cls.seq_relationship; electra: discriminator
  kNextSentence,    // bert: cls.seq_relationship
  kSequence,        // classifier
  kMultipleChoice,  // classifier [1, hidden]
  kToken,           // classifier
  kQuestion,        // qa_outputs
};

struct HeadSpec {
  Head head = Head::kNone;
  bool pooler = true;  // add_pooling_layer of the inner model
};

std::optional<HeadSpec> ParseHead(Family f, const std::string& cls, const std::string& base) {
  const std::string t(NamesOf(f).type_prefix);
  const bool bert = f == Family::kBert;
  const bool electra = f == Family::kElectra;
  // ELECTRA never has a pooler; RoBERTa drops it for every head but multiple choice.
  const bool head_pooler = bert;
  if (cls == base) return HeadSpec{Head::kNone, !electra};
  if (cls == t + "ForMaskedLM" || cls == t + "ForCausalLM" || (bert && cls == "BertLMHeadModel")) {
    return HeadSpec{Head::kMaskedLm, false};
  }
  if (cls == t + "ForPreTraining" && (bert || electra)) return HeadSpec{Head::kPreTraining, bert};
  if (bert && cls == "BertForNextSentencePrediction") return HeadSpec{Head::kNextSentence, true};
  if (cls == t + "ForSequenceClassification") return HeadSpec{Head::kSequence, head_pooler};
  if (cls == t + "ForMultipleChoice" && !electra) return HeadSpec{Head::kMultipleChoice, true};
  if (cls == t + "ForTokenClassification") return HeadSpec{Head::kToken, false};
  if (cls == t + "ForQuestionAnswering") return HeadSpec{Head::kQuestion, false};
  return std::nullopt;
}

// What the config says beyond Hyperparameters.
struct BertShape {
  uint64_t type_vocab = 0;  // "type_vocab_size"
  uint64_t emb = 0;         // ELECTRA's "embedding_size", else hidden_size
  std::string position_type;  // "position_embedding_type"
  bool relative = false;      // position_type is "relative_key" or "relative_key_query"
  bool cross = false;         // "add_cross_attention"
};

// Reads the encoder's hyperparameters into model.hp and the rest into the returned shape;
// read errors go to `b`.
BertShape ReadBertShape(ModelBuilder& b, const HfConfig& c, Family family) {
  auto& hp = b.model().hp;
  ReadEncoderBasics(b, c);
  // Training keeps a dropout mask per dropout (validation/FINDINGS.md 2m; BertConfig's defaults
  // are 0.1 for both).
  hp.hidden_dropout = Get(b, c.NumberOr("hidden_dropout_prob", 0.1));
  hp.attention_dropout = Get(b, c.NumberOr("attention_probs_dropout_prob", 0.1));
  BertShape shape;
  shape.type_vocab = Get(b, c.UintOr("type_vocab_size", 2));
  // ELECTRA's embeddings have their own width, projected to hidden_size when different.
  shape.emb = family == Family::kElectra ? Get(b, c.UintOr("embedding_size", 128))
                                         : hp.hidden_size;
  // "relative_key" / "relative_key_query" add a distance_embedding [2 * max_positions - 1,
  // head_dim] to every self-attention; add_cross_attention (decoder use) a crossattention block.
  shape.position_type = Get(b, c.StringOr("position_embedding_type", "absolute"));
  shape.cross = Get(b, c.BoolOr("add_cross_attention", false));
  return shape;
}

// Checks what was read and derives head_dim; an unknown position embedding is returned, the
// other errors go to `b`.
Status CheckBertShape(ModelBuilder& b, const HfConfig& c, BertShape& shape) {
  auto& hp = b.model().hp;
  shape.relative =
      shape.position_type == "relative_key" || shape.position_type == "relative_key_query";
  if (!shape.relative && shape.position_type != "absolute") {
    return MakeError("{}: \"position_embedding_type\" = \"{}\" is not \"absolute\", "
                     "\"relative_key\" or \"relative_key_query\"", c.where(), shape.position_type);
  }
  hp.head_dim = DivideExact(b, c, hp.hidden_size, "hidden_size", hp.num_attention_heads,
                            "num_attention_heads");
  if (hp.vocab_size == 0 || hp.hidden_size == 0 || hp.max_position_embeddings == 0) {
    b.Fail(MakeError("{}: \"vocab_size\", \"hidden_size\" and \"max_position_embeddings\" must be "
                     "positive", c.where()));
  }
  return Ok{};
}

// <p>embeddings: word, position and token-type tables, LayerNorm, the position_ids and
// token_type_ids buffers; ELECTRA's projection when its embeddings are narrower.
void EmitBertEmbeddings(ModelBuilder& b, const std::string& p, Family family,
                        const BertShape& shape) {
  const auto& hp = b.model().hp;
  const uint64_t emb = shape.emb;
  b.Embedding(p + "embeddings.word_embeddings", hp.vocab_size, emb);
  b.Embedding(p + "embeddings.position_embeddings", hp.max_position_embeddings, emb);
  b.Embedding(p + "embeddings.token_type_embeddings", shape.type_vocab, emb);
  b.LayerNorm(p + "embeddings.LayerNorm", emb);
  b.Buffer(p + "embeddings.position_ids", {1, hp.max_position_embeddings}, Dtype::kI64, false);
  b.Buffer(p + "embeddings.token_type_ids", {1, hp.max_position_embeddings}, Dtype::kI64, false);
  if (family == Family::kElectra && emb != hp.hidden_size) {
    b.Linear(p + "embeddings_project", emb, hp.hidden_size, true);
  }
}

// One encoder layer `l`: self-attention (with cross-attention when configured), the MLP.
void EmitBertLayer(ModelBuilder& b, const std::string& l, const BertShape& shape) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size, inter = hp.intermediate_size;
  b.Linear(l + ".attention.self.query", h, h, true);
  b.Linear(l + ".attention.self.key", h, h, true);
  b.Linear(l + ".attention.self.value", h, h, true);
  if (shape.relative) {
    b.Embedding(l + ".attention.self.distance_embedding", 2 * hp.max_position_embeddings - 1,
                hp.head_dim);
  }
  b.Linear(l + ".attention.output.dense", h, h, true);
  b.LayerNorm(l + ".attention.output.LayerNorm", h);
  if (shape.cross) {
    for (const char* proj : {"query", "key", "value"}) {
      b.Linear(l + ".crossattention.self." + proj, h, h, true);
    }
    if (shape.relative) {
      b.Embedding(l + ".crossattention.self.distance_embedding",
                  2 * hp.max_position_embeddings - 1, hp.head_dim);
    }
    b.Linear(l + ".crossattention.output.dense", h, h, true);
    b.LayerNorm(l + ".crossattention.output.LayerNorm", h);
  }
  b.Linear(l + ".intermediate.dense", h, inter, true);
  b.Linear(l + ".output.dense", inter, h, true);
  b.LayerNorm(l + ".output.LayerNorm", h);
}

// BertLMPredictionHead (cls.predictions): transform, then a decoder tied to the word embeddings
// `word` with its own bias.
void EmitBertClsPredictions(ModelBuilder& b, const std::string& word) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size;
  b.Linear("cls.predictions.transform.dense", h, h, true);
  b.LayerNorm("cls.predictions.transform.LayerNorm", h);
  b.Tied("cls.predictions.decoder.weight", {hp.vocab_size, h}, word);
  b.Param("cls.predictions.bias", {hp.vocab_size});
  b.Tied("cls.predictions.decoder.bias", {hp.vocab_size}, "cls.predictions.bias");
}

// The task head of `head` on top of the encoder (`word`: the word embeddings' weight).
void EmitBertHead(ModelBuilder& b, const HfConfig& c, Family family, Head head,
                  const std::string& word, uint64_t emb) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size;
  b.SetHead(true);
  const uint64_t labels = NumLabels(b, c);
  switch (head) {
    case Head::kNone:
      break;
    case Head::kMaskedLm:
      if (family == Family::kBert) {
        EmitBertClsPredictions(b, word);
      } else if (family == Family::kElectra) {
        b.LayerNorm("generator_predictions.LayerNorm", emb);
        b.Linear("generator_predictions.dense", h, emb, true);
        b.Tied("generator_lm_head.weight", {hp.vocab_size, emb}, word);
        b.Param("generator_lm_head.bias", {hp.vocab_size});
      } else {
        b.Linear("lm_head.dense", h, h, true);
        b.LayerNorm("lm_head.layer_norm", h);
        b.Tied("lm_head.decoder.weight", {hp.vocab_size, h}, word);
        b.Param("lm_head.bias", {hp.vocab_size});
        b.Tied("lm_head.decoder.bias", {hp.vocab_size}, "lm_head.bias");
      }
      break;
    case Head::kPreTraining:
      if (family == Family::kElectra) {
        b.Linear("discriminator_predictions.dense", h, h, true);
        b.Linear("discriminator_predictions.dense_prediction", h, 1, true);
        break;
      }
      EmitBertClsPredictions(b, word);
      b.Linear("cls.seq_relationship", h, 2, true);
      break;
    case Head::kNextSentence:
      b.Linear("cls.seq_relationship", h, 2, true);
      break;
    case Head::kSequence:
      if (family == Family::kBert) {
        b.Linear("classifier", h, labels, true);
      } else {
        b.Linear("classifier.dense", h, h, true);
        b.Linear("classifier.out_proj", h, labels, true);
      }
      break;
    case Head::kMultipleChoice:
      b.Linear("classifier", h, 1, true);
      break;
    case Head::kToken:
      b.Linear("classifier", h, labels, true);
      break;
    case Head::kQuestion:
      b.Linear("qa_outputs", h, labels, true);
      break;
  }
  b.SetHead(false);
}

Result<Model> BuildBertLike(const HfConfig& c, const BuildOptions& options, Family family) {
  const Names names = NamesOf(family);
  const std::string base_class = std::string(names.type_prefix) + "Model";
  const std::string cls = HeadClass(c, options, names.type_prefix, base_class);
  auto spec = ParseHead(family, cls, base_class);
  if (!spec) {
    std::string t(names.type_prefix);
    return UnknownHead(c, cls, base_class + ", " + t + "ForMaskedLM, " + t +
                                   "ForSequenceClassification, " + t + "ForTokenClassification, " +
                                   t + "ForQuestionAnswering, " + t + "ForMultipleChoice");
  }
  ModelBuilder b(c);
  Model& m = b.model();
  m.architecture = cls;
  auto& hp = m.hp;
  BertShape shape = ReadBertShape(b, c, family);
  if (b.failed()) return b.Finish();
  MEMFIT_RETURN_IF_ERROR(CheckBertShape(b, c, shape));
  if (b.failed()) return b.Finish();

  const bool is_base = spec->head == Head::kNone;
  const std::string p = is_base ? "" : std::string(names.prefix) + ".";
  EmitBertEmbeddings(b, p, family, shape);
  for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
    EmitBertLayer(b, Layer(p + "encoder.layer", i), shape);
    // Encoder-only: bidirectional attention, no KV cache.
    hp.layers.push_back(DenseLayer(AttentionKind::kNone, hp.num_attention_heads, hp.head_dim,
                                   hp.intermediate_size));
  }
  // The base AutoModel (accelerate's view) always has BERT's and RoBERTa's pooler.
  if (family != Family::kElectra) {
    b.SetBaseOnly(!spec->pooler);
    b.Linear(p + "pooler.dense", hp.hidden_size, hp.hidden_size, true);
    b.SetBaseOnly(false);
  }
  EmitBertHead(b, c, family, spec->head, p + "embeddings.word_embeddings.weight", shape.emb);

  // transformers 4.42's _no_split_modules: BertModel ["BertEmbeddings", "BertLayer"]; RoBERTa and
  // XLM-R ["...Embeddings", "...SelfAttention", "...SdpaSelfAttention"]; ELECTRA none.
  const std::string mp = is_base ? "" : p;
  if (family == Family::kBert) {
    m.no_split_patterns = {mp + "embeddings", mp + "encoder.layer.*"};
  } else if (family != Family::kElectra) {
    m.no_split_patterns = {mp + "embeddings", mp + "encoder.layer.*.attention.self"};
  }
  m.base_model_prefix = p;
  return b.Finish();
}

}  // namespace

Result<Model> BuildBert(const HfConfig& c, const BuildOptions& o) {
  return BuildBertLike(c, o, Family::kBert);
}
Result<Model> BuildRoberta(const HfConfig& c, const BuildOptions& o) {
  return BuildBertLike(c, o, Family::kRoberta);
}
Result<Model> BuildXlmRoberta(const HfConfig& c, const BuildOptions& o) {
  return BuildBertLike(c, o, Family::kXlmRoberta);
}
Result<Model> BuildElectra(const HfConfig& c, const BuildOptions& o) {
  return BuildBertLike(c, o, Family::kElectra);
}

}  // namespace memfit::arch
