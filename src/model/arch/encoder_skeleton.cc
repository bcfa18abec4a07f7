// BuildEncoder: the one builder of every EncoderSpec row (encoder_spec.h). Hand-written here is
// only what a row cannot say: how each config class is read and checked, DeBERTa-v2's
// pos_att_type and the modules after its layers, T5's feed_forward_proj.

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/encoder_spec.h"

namespace memfit::arch {
namespace {

// What the config says beyond Hyperparameters.
struct EncoderShape {
  uint64_t embed = 0;       // the embeddings' width
  uint64_t type_vocab = 0;  // token types
  bool relative = false;    // relative_key(_query) (bert); relative_attention (deberta-v2)
  bool cross = false;       // "add_cross_attention" (bert)
  uint64_t encoder_heads = 0, encoder_ffn = 0;  // kBart: the encoder's, when not the decoder's
  uint64_t buckets = 0;                         // kT5: relative_attention_num_buckets
  uint64_t mels = 0;                            // mel_frontend: num_mel_bins
  // kDebertaV2.
  bool position_biased = true, share_att_key = false, c2p = false, p2c = false;
  std::string norm_rel_ebd;
  uint64_t conv_kernel = 0, conv_groups = 1, pooler_hidden = 0;
  int64_t max_relative = -1, position_buckets = -1;
};

// A config key read into `out`: required, unless it has a default.
struct UintKey {
  std::string_view key;  // "": not read
  uint64_t* out = nullptr;
  std::optional<uint64_t> fallback = std::nullopt;
};

// Reads `keys` in order; errors go to `b`.
void ReadKeys(ModelBuilder& b, const HfConfig& c, std::initializer_list<UintKey> keys) {
  for (const UintKey& k : keys) {
    if (!k.key.empty()) *k.out = Get(b, k.fallback ? c.UintOr(k.key, *k.fallback) : c.Uint(k.key));
  }
}

// DeBERTa-v2: max_relative_positions and position_buckets (-1: unset), pos_att_type (a list,
// ["p2c", "c2p"], or a "p2c|c2p" string).
void ReadDebertaRelative(ModelBuilder& b, const HfConfig& c, EncoderShape& shape) {
  for (auto [key, out] : {std::pair{"max_relative_positions", &shape.max_relative},
                          std::pair{"position_buckets", &shape.position_buckets}}) {
    auto it = c.raw().find(key);
    if (it == c.raw().end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() > int64_t{1} << 30) {
      b.Fail(MakeError("{}: field \"{}\" must be an integer (-1 for unset)", c.where(), key));
      continue;
    }
    *out = it->get<int64_t>();
  }
  if (auto it = c.raw().find("pos_att_type"); it != c.raw().end()) {
    std::string joined;
    if (it->is_array()) {
      for (const auto& v : *it) joined += (v.is_string() ? v.get<std::string>() : "") + "|";
    } else if (it->is_string()) {
      joined = it->get<std::string>();
    }
    shape.c2p = joined.find("c2p") != std::string::npos;
    shape.p2c = joined.find("p2c") != std::string::npos;
  }
}

// kBert, kDistilBert, kDebertaV2.
void ReadEncoderHyper(ModelBuilder& b, const HfConfig& c, const EncoderSpec& spec,
                      EncoderShape& shape) {
  auto& hp = b.model().hp;
  ReadKeys(b, c,
           {{"vocab_size", &hp.vocab_size},
            {spec.hidden_key, &hp.hidden_size},
            {spec.layers_key, &hp.num_layers},
            {spec.heads_key, &hp.num_attention_heads},
            {spec.ffn_key, &hp.intermediate_size},
            {"max_position_embeddings", &hp.max_position_embeddings, 512},
            {spec.type_vocab_key, &shape.type_vocab, spec.type_vocab_default}});
  hp.num_kv_heads = hp.num_attention_heads;
  hp.activation = Get(b, c.StringOr(spec.act_key, "gelu"));
  hp.norm = "layernorm";
  const uint64_t embed_default = spec.embed_default ? spec.embed_default : hp.hidden_size;
  shape.embed =
      spec.embed_key.empty() ? hp.hidden_size : Get(b, c.UintOr(spec.embed_key, embed_default));
  if (spec.config == EncoderConfig::kBert) {
    // Training keeps a dropout mask per dropout (validation/FINDINGS.md 2m).
    hp.hidden_dropout = Get(b, c.NumberOr("hidden_dropout_prob", 0.1));
    hp.attention_dropout = Get(b, c.NumberOr("attention_probs_dropout_prob", 0.1));
    const std::string position = Get(b, c.StringOr("position_embedding_type", "absolute"));
    shape.relative = position == "relative_key" || position == "relative_key_query";
    if (!shape.relative && position != "absolute") {
      b.Fail(
          MakeError("{}: \"position_embedding_type\" = \"{}\" is not \"absolute\", "
                    "\"relative_key\" or \"relative_key_query\"",
                    c.where(), position));
    }
    shape.cross = Get(b, c.BoolOr("add_cross_attention", false));
    if (hp.vocab_size == 0 || hp.hidden_size == 0 || hp.max_position_embeddings == 0) {
      b.Fail(
          MakeError("{}: \"vocab_size\", \"hidden_size\" and \"max_position_embeddings\" "
                    "must be positive",
                    c.where()));
    }
  }
  if (spec.config == EncoderConfig::kDebertaV2) {
    shape.position_biased = Get(b, c.BoolOr("position_biased_input", true));
    shape.relative = Get(b, c.BoolOr("relative_attention", false));
    shape.share_att_key = Get(b, c.BoolOr("share_att_key", false));
    shape.norm_rel_ebd = Get(b, c.StringOr("norm_rel_ebd", "none"));
    ReadKeys(b, c,
             {{"conv_kernel_size", &shape.conv_kernel, 0},
              {"conv_groups", &shape.conv_groups, 1},
              {"pooler_hidden_size", &shape.pooler_hidden, hp.hidden_size},
              {"attention_head_size", &hp.head_dim, 0}});
    ReadDebertaRelative(b, c, shape);
  }
  if (hp.head_dim == 0) {
    hp.head_dim =
        DivideExact(b, c, hp.hidden_size, spec.hidden_key, hp.num_attention_heads, spec.heads_key);
  }
}

void ReadT5Hyper(ModelBuilder& b, const HfConfig& c, const EncoderSpec& spec, bool encoder_only,
                 EncoderShape& shape) {
  auto& hp = b.model().hp;
  // n_positions: 0 by default, relative positions have no limit.
  ReadKeys(b, c,
           {{"vocab_size", &hp.vocab_size},
            {"d_model", &hp.hidden_size},
            {"num_layers", &hp.num_encoder_layers},
            {"num_heads", &hp.num_attention_heads},
            {"d_kv", &hp.head_dim},
            {"d_ff", &hp.intermediate_size},
            {"n_positions", &hp.max_position_embeddings, 0},
            {"relative_attention_num_buckets", &shape.buckets, 32}});
  hp.num_layers = Get(b, c.UintOr("num_decoder_layers", hp.num_encoder_layers));
  hp.num_kv_heads = hp.num_attention_heads;
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", spec.tie_default));
  const std::string ff = Get(b, c.StringOr("feed_forward_proj", "relu"));
  // T5Config "dropout_rate" (default 0.1): every sublayer's output, the attention probabilities,
  // the embeddings, each stack's final output and the MLP's activation (modeling_t5.py
  // T5LayerFF, T5Attention, T5Stack, T5DenseActDense; the last is a training estimator table
  // row, estimate/activations.cc MlpActivationDropout).
  hp.hidden_dropout = hp.attention_dropout = Get(b, c.NumberOr("dropout_rate", 0.1));
  hp.norm = "rmsnorm";
  hp.is_encoder_decoder = !encoder_only;
  if (b.failed()) return;
  // T5Config: "gated-gelu" -> gated, act "gelu_new"; otherwise the activation's name.
  hp.gated_mlp = ff.starts_with("gated-");
  hp.activation = hp.gated_mlp ? ff.substr(6) : ff;
  if (hp.activation == "gelu" && hp.gated_mlp) hp.activation = "gelu_new";
  if (hp.activation.empty() || (ff.find('-') != std::string::npos && !hp.gated_mlp)) {
    b.Fail(MakeError("{}: \"feed_forward_proj\" = \"{}\" is not \"<act>\" or \"gated-<act>\"",
                     c.where(), ff));
  }
  if (hp.vocab_size == 0 || hp.hidden_size == 0 || hp.num_attention_heads == 0 ||
      hp.head_dim == 0) {
    b.Fail(MakeError("{}: \"vocab_size\", \"d_model\", \"num_heads\" and \"d_kv\" must be positive",
                     c.where()));
  }
}

void ReadBartHyper(ModelBuilder& b, const HfConfig& c, const EncoderSpec& spec,
                   EncoderShape& shape) {
  auto& hp = b.model().hp;
  ReadKeys(b, c,
           {{"vocab_size", &hp.vocab_size},
            {"d_model", &hp.hidden_size},
            {spec.mel_frontend ? "num_mel_bins" : "", &shape.mels, 80},
            {"encoder_layers", &hp.num_encoder_layers},
            {"decoder_layers", &hp.num_layers},
            {"encoder_attention_heads", &shape.encoder_heads},
            {"decoder_attention_heads", &hp.num_attention_heads},
            {"encoder_ffn_dim", &shape.encoder_ffn},
            {"decoder_ffn_dim", &hp.intermediate_size},
            {spec.src_positions_key, &hp.encoder_max_positions, spec.src_positions_default},
            {spec.tgt_positions_key, &hp.max_position_embeddings, spec.tgt_positions_default}});
  hp.num_kv_heads = hp.num_attention_heads;
  hp.tie_word_embeddings = Get(b, c.BoolOr("tie_word_embeddings", true));
  hp.activation = Get(b, c.StringOr("activation_function", "gelu"));
  hp.norm = "layernorm";
  hp.is_encoder_decoder = true;
  if (b.failed()) return;
  DivideExact(b, c, hp.hidden_size, "d_model", shape.encoder_heads, "encoder_attention_heads");
  hp.head_dim = DivideExact(b, c, hp.hidden_size, "d_model", hp.num_attention_heads,
                            "decoder_attention_heads");
}

// `pattern` with its "{}" (if any) replaced by `index`.
std::string Sub(std::string_view pattern, uint64_t index) {
  std::string name(pattern);
  if (size_t at = name.find("{}"); at != std::string::npos) {
    name.replace(at, 2, std::to_string(index));
  }
  return name;
}

// The layer `index` under `l`: self-attention, cross-attention when `cross`, the FFN `ffn` wide.
void EmitLayer(ModelBuilder& b, const std::string& l, const EncoderSpec& spec,
               const EncoderShape& shape, uint64_t index, bool cross, uint64_t ffn) {
  const auto& hp = b.model().hp;
  const LayerNames& n = spec.names;
  // T5: no biases, RMSNorms (a LayerNorm without bias has the same tensors).
  const bool t5 = spec.config == EncoderConfig::kT5, bias = !t5;
  const uint64_t d = hp.hidden_size, inner = hp.num_attention_heads * hp.head_dim;
  uint64_t sub = 0;  // the sublayer's index
  auto attention = [&](std::string_view block, std::string_view norm_name, bool self) {
    const std::string a = l + "." + Sub(block, sub);
    for (int i : n.kvq_order ? std::array{1, 2, 0} : std::array{0, 1, 2}) {
      b.Linear(a + std::string(n.proj[i]), d, inner, bias && (i != 1 || spec.key_bias));
    }
    if (spec.config == EncoderConfig::kBert && shape.relative) {
      b.Embedding(a + ".self.distance_embedding", 2 * hp.max_position_embeddings - 1, hp.head_dim);
    }
    if (spec.config == EncoderConfig::kDebertaV2 && shape.relative && !shape.share_att_key) {
      if (shape.c2p) b.Linear(a + ".self.pos_key_proj", d, inner, true);
      if (shape.p2c) b.Linear(a + ".self.pos_query_proj", d, inner, true);
    }
    // DebertaV2SelfOutput.dense is [hidden, hidden] whatever attention_head_size says.
    b.Linear(a + std::string(n.proj[3]), spec.config == EncoderConfig::kDebertaV2 ? d : inner, d,
             bias);
    if (t5 && self && (index == 0 || spec.bias_every_layer)) {
      b.Embedding(a + ".relative_attention_bias", shape.buckets, hp.num_attention_heads);
    }
    b.LayerNorm(l + "." + Sub(norm_name, sub++), d, bias);
  };
  attention(n.self, n.self_norm, true);
  if (cross) attention(n.cross, n.cross_norm, false);
  const std::string up = l + "." + Sub(n.up, sub);
  if (hp.gated_mlp) {
    b.Linear(up + "_0", d, ffn, bias);
    b.Linear(up + "_1", d, ffn, bias);
  } else {
    b.Linear(up, d, ffn, bias);
  }
  b.Linear(l + "." + Sub(n.down, sub), ffn, d, bias);
  b.LayerNorm(l + "." + Sub(n.ffn_norm, sub), d, bias);
}

// An encoder's <p>embeddings: word, position and token-type tables, LayerNorm, the position_ids
// (and token_type_ids) buffers, the projection to hidden_size.
void EmitEmbeddings(ModelBuilder& b, const std::string& p, const EncoderSpec& spec,
                    const EncoderShape& shape) {
  const auto& hp = b.model().hp;
  const std::string e = p + "embeddings.";
  const uint64_t emb = shape.embed, h = hp.hidden_size;
  const bool project = emb != h;
  b.Embedding(e + "word_embeddings", hp.vocab_size, emb);
  if (shape.position_biased) {
    b.Embedding(e + "position_embeddings", hp.max_position_embeddings, emb);
  }
  if (spec.token_type_ids || shape.type_vocab > 0) {
    b.Embedding(e + "token_type_embeddings", shape.type_vocab, emb);
  }
  if (spec.embed_proj == EmbedProj::kBefore && project) b.Linear(e + "embed_proj", emb, h, false);
  b.LayerNorm(e + "LayerNorm", spec.embed_proj == EmbedProj::kBefore ? h : emb);
  b.Buffer(e + "position_ids", {1, hp.max_position_embeddings}, Dtype::kI64, false);
  if (spec.token_type_ids) {
    b.Buffer(e + "token_type_ids", {1, hp.max_position_embeddings}, Dtype::kI64, false);
  }
  if (spec.embed_proj == EmbedProj::kAfter && project) {
    b.Linear(p + "embeddings_project", emb, h, true);
  }
}

// DebertaV2Encoder after its layers: rel_embeddings [2 pos_ebd_size, h] (max_relative_positions
// < 1 -> max_position_embeddings; position_buckets when > 0), LayerNorm ("layer_norm" in
// norm_rel_ebd), the ConvLayer (conv_kernel_size > 0).
void EmitDebertaTail(ModelBuilder& b, const std::string& p, const EncoderShape& shape) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size;
  if (shape.relative) {
    const uint64_t max_rel = shape.max_relative < 1 ? hp.max_position_embeddings
                                                    : static_cast<uint64_t>(shape.max_relative);
    const uint64_t pos_ebd =
        shape.position_buckets > 0 ? static_cast<uint64_t>(shape.position_buckets) : max_rel;
    b.Embedding(p + "encoder.rel_embeddings", pos_ebd * 2, h);
  }
  if (shape.norm_rel_ebd.find("layer_norm") != std::string::npos) {
    b.LayerNorm(p + "encoder.LayerNorm", h);
  }
  if (shape.conv_kernel > 0) {
    b.Conv(p + "encoder.conv.conv", h, h, {shape.conv_kernel}, true, shape.conv_groups);
    b.LayerNorm(p + "encoder.conv.LayerNorm", h);
  }
}

// An encoder-decoder's stack "<p><side>.": token embeddings (or Whisper's convolutions), learned
// positions (kBart), the layers, the final norms. A decoder's layers add their LayerInfo.
void EmitStack(ModelBuilder& b, const std::string& p, const EncoderSpec& spec,
               const EncoderShape& shape, bool decoder) {
  auto& hp = b.model().hp;
  const uint64_t d = hp.hidden_size, vocab = hp.vocab_size;
  const std::string s = p + (decoder ? "decoder." : "encoder.");
  if (spec.mel_frontend && !decoder) {
    b.Conv(s + "conv1", shape.mels, d, {3}, true);
    b.Conv(s + "conv2", d, d, {3}, true);
  } else if (spec.tokens == Tokens::kOwn) {
    b.Embedding(s + "embed_tokens", vocab, d);
  } else {
    b.Tied(s + "embed_tokens.weight", {vocab, d}, p + std::string(spec.shared) + ".weight");
    if (spec.tokens == Tokens::kSharedBrokenOnMeta && !b.failed()) {
      b.model().tensors.back().tie_broken_on_meta = true;
    }
  }
  if (spec.config == EncoderConfig::kBart) {
    const uint64_t positions = decoder ? hp.max_position_embeddings : hp.encoder_max_positions;
    b.Embedding(s + "embed_positions", positions + spec.positions_offset, d);
  }
  const uint64_t layers = decoder ? hp.num_layers : hp.num_encoder_layers;
  const bool bart_encoder = spec.config == EncoderConfig::kBart && !decoder;
  const uint64_t ffn = bart_encoder ? shape.encoder_ffn : hp.intermediate_size;
  for (uint64_t i = 0; i < layers && !b.failed(); ++i) {
    EmitLayer(b, Layer(s + std::string(spec.layers), i), spec, shape, i, decoder, ffn);
    if (!decoder) continue;
    LayerInfo info = DenseLayer(AttentionKind::kFull, hp.num_attention_heads, hp.head_dim, ffn);
    info.cross_attention = true;
    hp.layers.push_back(info);
  }
  for (std::string_view norm : spec.final_norms) {
    if (!norm.empty()) b.LayerNorm(s + std::string(norm), d, spec.config != EncoderConfig::kT5);
  }
}

// The head of `head` (`p`: the prefix of the base model's modules).
void EmitHead(ModelBuilder& b, const HfConfig& c, const EncoderSpec& spec, const EncoderHead& head,
              const std::string& cls, const std::string& p, const EncoderShape& shape) {
  const auto& hp = b.model().hp;
  const uint64_t h = hp.hidden_size, vocab = hp.vocab_size;
  const bool seq2seq = spec.config == EncoderConfig::kT5 || spec.config == EncoderConfig::kBart;
  b.SetHead(true);
  // Encoders read num_labels for every class (a malformed one fails even the base model),
  // encoder-decoders only for a head sized by it.
  const bool labelled = head.out_dim == HeadDim::kLabels || head.out_dim == HeadDim::kLabels2;
  const uint64_t labels = !seq2seq || (labelled && !head.out.empty()) ? NumLabels(b, c) : 0;
  if (head.mlm) {
    const MlmNames& n = spec.mlm;
    const uint64_t emb = shape.embed;
    if (n.norm_first) b.LayerNorm(std::string(n.norm), emb);
    b.Linear(std::string(n.dense), h, emb, true);
    if (!n.norm_first) b.LayerNorm(std::string(n.norm), emb);
    b.Tied(std::string(n.decoder), {vocab, emb}, p + "embeddings.word_embeddings.weight");
    b.Param(std::string(n.bias), {vocab});
    if (!n.decoder_bias.empty()) b.Tied(std::string(n.decoder_bias), {vocab}, std::string(n.bias));
  }
  if (head.lm_head) {
    if (spec.final_logits_bias) b.Buffer("final_logits_bias", {1, vocab}, b.dtype(), true);
    const std::string lm(spec.lm_head);
    if (hp.tie_word_embeddings) {
      const std::string target = spec.shared.empty() ? p + "decoder.embed_tokens.weight"
                                                     : p + std::string(spec.shared) + ".weight";
      b.Tied(lm + ".weight", {vocab, h}, target);
    } else {
      b.Linear(lm, h, vocab, false);
    }
  }
  if (head.out_dim == HeadDim::kLabels2 && !head.out.empty() && labels != 2) {
    b.Fail(MakeError("{}: {} needs \"num_labels\" = 2, not {}", c.where(), cls, labels));
  }
  // Indexed by HeadDim.
  const uint64_t dims[] = {h, shape.pooler_hidden, labels, labels, 1, 2};
  const uint64_t width = dims[static_cast<size_t>(head.width)];
  if (!head.dense.empty()) b.Linear(std::string(head.dense), width, width, true);
  if (!head.out.empty()) {
    b.Linear(std::string(head.out), width, dims[static_cast<size_t>(head.out_dim)], true);
  }
  b.SetHead(false);
}

}  // namespace

Result<Model> BuildEncoder(const HfConfig& c, const BuildOptions& options,
                           const EncoderSpec& spec) {
  const std::string t(spec.type_prefix);
  const std::string cls = HeadClass(c, options, t, t + "Model");
  const EncoderHead* head = nullptr;
  std::string known;
  for (const EncoderHead& row : spec.heads) {
    if (t + std::string(row.suffix) == cls && !row.refused) head = &row;
    if (!row.listed) continue;
    known += (known.empty() ? "" : ", ") + t + std::string(row.suffix);
  }
  if (head == nullptr) return UnknownHead(c, cls, known);
  ModelBuilder b(c);
  Model& m = b.model();
  m.architecture = cls;
  auto& hp = m.hp;
  EncoderShape shape;
  const bool seq2seq = spec.config == EncoderConfig::kT5 || spec.config == EncoderConfig::kBart;
  if (spec.config == EncoderConfig::kT5) {
    ReadT5Hyper(b, c, spec, head->encoder_only, shape);
  } else if (spec.config == EncoderConfig::kBart) {
    ReadBartHyper(b, c, spec, shape);
  } else {
    ReadEncoderHyper(b, c, spec, shape);
  }
  if (b.failed()) return b.Finish();

  const bool is_base = head->suffix == "Model";
  const std::string p = is_base || spec.prefix.empty() ? "" : std::string(spec.prefix) + ".";
  if (seq2seq) {
    if (!spec.shared.empty()) {
      b.Embedding(p + std::string(spec.shared), hp.vocab_size, hp.hidden_size);
    }
    EmitStack(b, p, spec, shape, false);
    if (!head->encoder_only) EmitStack(b, p, spec, shape, true);
  } else {
    EmitEmbeddings(b, p, spec, shape);
  }
  if (!seq2seq || head->encoder_only) {
    // Encoder-only: bidirectional attention, no KV cache.
    if (seq2seq) hp.num_layers = std::exchange(hp.num_encoder_layers, 0);
    for (uint64_t i = 0; i < hp.num_layers && !b.failed(); ++i) {
      if (!seq2seq) {
        EmitLayer(b, Layer(p + std::string(spec.layers), i), spec, shape, i, shape.cross,
                  hp.intermediate_size);
      }
      hp.layers.push_back(DenseLayer(AttentionKind::kNone, hp.num_attention_heads, hp.head_dim,
                                     hp.intermediate_size));
    }
  }
  if (spec.config == EncoderConfig::kDebertaV2) EmitDebertaTail(b, p, shape);
  if (!spec.pooler.empty()) {  // the base AutoModel (accelerate's view) always has it
    b.SetBaseOnly(!head->pooler);
    b.Linear(p + std::string(spec.pooler), hp.hidden_size, hp.hidden_size, true);
    b.SetBaseOnly(false);
  }
  EmitHead(b, c, spec, *head, cls, p, shape);
  for (std::string_view pattern : spec.no_split) {
    if (!pattern.empty()) m.no_split_patterns.push_back(p + std::string(pattern));
  }
  m.base_model_prefix = p;
  return b.Finish();
}

}  // namespace memfit::arch
