#pragma once
// Encoder and encoder-decoder families as data (issue 30): the config class, the module names and
// the head classes. BuildEncoder (encoder_skeleton.cc) builds any spec; the rows, one per
// model_type citing its transformers modeling file, are in encoder_families.cc.
//
// Tensor order, as transformers registers the modules: [shared]; per stack (an encoder-only model
// has one, at <prefix>) the token embeddings, the positions, BERT's token types, LayerNorm and
// buffers; the layers (self-attention q/k/v, its relative-position tables, the output projection
// and norm; a decoder's cross-attention likewise; the FFN and its norm); the stack's final norms;
// the pooler; the head.

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "memfit/architecture.h"

namespace memfit::arch {

// The config class: which keys the skeleton reads (the *_key fields and those named here).
enum class EncoderConfig : uint8_t {
  // BertConfig (RobertaConfig, XLMRobertaConfig, ElectraConfig): the *_key fields, type_vocab_size,
  // hidden_dropout_prob and attention_probs_dropout_prob (0.1), add_cross_attention,
  // position_embedding_type: "relative_key(_query)" adds self.distance_embedding
  // [2 max_position_embeddings - 1, head_dim] to every attention.
  kBert,
  kDistilBert,  // DistilBertConfig: the *_key fields only
  // DebertaV2Config: the *_key fields and its own (ReadEncoderHyper, encoder_skeleton.cc).
  kDebertaV2,
  // T5Config: d_model, num_layers, num_decoder_layers, num_heads, d_kv, d_ff, n_positions,
  // feed_forward_proj ("gated-<act>": wi_0 and wi_1), dropout_rate, relative_attention_num_buckets
  // (relative_attention_bias [buckets, heads] after o); RMSNorm, no biases.
  kT5,
  // BartConfig (MBartConfig, WhisperConfig): d_model, encoder_/decoder_layers, _attention_heads,
  // _ffn_dim, the positions of each side, tie_word_embeddings (true), activation_function.
  kBart,
};

// A stack's token embeddings (encoder-decoders).
enum class Tokens : uint8_t {
  kShared,  // embed_tokens tied to the model's "shared" (one module: counted once)
  // Tied to "shared" as an assigned parameter: accelerate's init_empty_weights breaks the tie
  // and counts it again (Tensor::tie_broken_on_meta).
  kSharedBrokenOnMeta,
  kOwn,  // the decoder's own embed_tokens; the encoder reads log-mel features (mel_frontend)
};

// BERT-style embeddings projected to hidden_size when embedding_size differs.
enum class EmbedProj : uint8_t {
  kNone,
  kAfter,   // "embeddings_project" (biased) after the buffers (electra)
  kBefore,  // "embeddings.embed_proj" (no bias) before a LayerNorm of hidden_size (deberta-v2)
};

// Names of one layer's modules, relative to the layer; "{}" stands for the index of the
// sublayer (T5's layer.0 self-attention, layer.1 cross-attention, then the FFN).
struct LayerNames {
  std::string_view self = "attention", cross = "";  // attention blocks ("" none)
  std::array<std::string_view, 4> proj = {".self.query", ".self.key", ".self.value",
                                          ".output.dense"};  // q, k, v, o after the block
  bool kvq_order = false;                                    // registered k, v, q, o (bart)
  std::string_view self_norm = "attention.output.LayerNorm", cross_norm = "";
  std::string_view up = "intermediate.dense";  // gated (T5 v1.1): up + "_0" and up + "_1"
  std::string_view down = "output.dense", ffn_norm = "output.LayerNorm";
};

// The masked-LM head: dense [hidden -> embedding width] and its LayerNorm (the norm first when
// norm_first), the decoder weight tied to the word embeddings, its own bias [vocab], and the
// decoder's bias tied to that bias (decoder_bias; "" none).
struct MlmNames {
  std::string_view dense = "", norm = "", decoder = "", bias = "", decoder_bias = "";
  bool norm_first = false;
};

// A head's sizes (EmitHead indexes a table by them: keep the order).
enum class HeadDim : uint8_t { kHidden, kPooler, kLabels, kLabels2, kOne, kTwo };

// A class: type_prefix + suffix ("Model": the base class, whose modules are not prefixed).
// Its head, in order: the MLM head, the LM head, then `dense` [width, width] and `out`
// [width -> out_dim], both biased. kLabels is num_labels (NumLabels); kLabels2 too, which must
// then be 2; kPooler is DeBERTa's pooler_hidden_size.
struct EncoderHead {
  std::string_view suffix = "";
  bool pooler = false;        // keeps the base model's pooler (add_pooling_layer)
  bool mlm = false;           // the family's masked-LM head (EncoderSpec::mlm)
  bool lm_head = false;       // the seq2seq LM head (EncoderSpec::lm_head)
  bool encoder_only = false;  // an encoder-decoder's encoder alone (T5EncoderModel)
  std::string_view dense = "", out = "";
  HeadDim width = HeadDim::kHidden, out_dim = HeadDim::kLabels;
  bool listed = true;    // named in the unknown-class error
  bool refused = false;  // named there, yet not built
};

struct EncoderSpec {
  std::string_view type_prefix = "";  // "Bert": BertModel, BertForMaskedLM, ...
  std::string_view prefix = "";       // base_model_prefix of the head classes ("" none)
  EncoderConfig config = EncoderConfig::kBert;
  std::string_view hidden_key = "hidden_size", layers_key = "num_hidden_layers",
                   heads_key = "num_attention_heads", ffn_key = "intermediate_size",
                   act_key = "hidden_act";
  // Encoders: embeddings.{word,position,token_type}_embeddings, LayerNorm, position_ids.
  std::string_view embed_key = "";                      // the embeddings' width ("" hidden_size)
  uint64_t embed_default = 0;                           // its default (0: hidden_size)
  std::string_view type_vocab_key = "type_vocab_size";  // "" no token types
  uint64_t type_vocab_default = 2;
  bool token_type_ids = false;  // the non-persistent token_type_ids buffer beside position_ids
  EmbedProj embed_proj = EmbedProj::kNone;
  // Encoder-decoders: shared token embeddings and each stack's.
  std::string_view shared = "";
  Tokens tokens = Tokens::kShared;
  bool mel_frontend = false;  // encoder.conv1/conv2 from num_mel_bins (80) (whisper)
  std::string_view src_positions_key = "max_position_embeddings";  // kBart
  std::string_view tgt_positions_key = "max_position_embeddings";
  uint64_t src_positions_default = 1024, tgt_positions_default = 1024, positions_offset = 0;
  bool key_bias = true;           // the attention's k bias (whisper: none)
  bool tie_default = true;        // kT5 "tie_word_embeddings"
  bool bias_every_layer = false;  // kT5: relative_attention_bias in every self-attention
  // Layers and what follows them.
  std::string_view layers = "encoder.layer";  // under the prefix, or "encoder."/"decoder."
  LayerNames names{};
  std::array<std::string_view, 2> final_norms = {};  // each stack's, after its layers
  std::string_view pooler = "";                      // the base model's pooler Linear
  // Heads.
  MlmNames mlm{};
  std::string_view lm_head = "lm_head";  // tied to the shared (else decoder) token embeddings
  bool final_logits_bias = false;        // the persistent buffer [1, vocab] beside the LM head
  std::span<const EncoderHead> heads = {};
  std::array<std::string_view, 2> no_split = {};  // _no_split_modules, under the prefix
};

// Builds the model `spec` describes from `config` (encoder_skeleton.cc).
Result<Model> BuildEncoder(const HfConfig& config, const BuildOptions& options,
                           const EncoderSpec& spec);

// The registry rows of every EncoderSpec family (encoder_families.cc).
const std::vector<ArchitectureBuilder>& EncoderFamilyBuilders();

}  // namespace memfit::arch
