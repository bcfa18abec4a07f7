// The encoder and encoder-decoder families that are an EncoderSpec row (encoder_spec.h), one per
// model_type, each naming its source. A row sets only what differs from the defaults: BERT's
// names (embeddings.*, encoder.layer.N.{attention.self.{query,key,value}, attention.output.{dense,
// LayerNorm}, intermediate.dense, output.{dense,LayerNorm}}). Parity with the builders they
// replaced (bert.cc, distilbert.cc, deberta.cc, t5.cc, bart.cc, whisper.cc): model_digest_test.cc.
// Registered through EncoderFamilyBuilders() (registry.cc).

#include "model/arch/encoder_spec.h"
#include "model/arch/table_row.h"

namespace memfit::arch {
namespace {

// The registry row of `kSpec`, its family named as its model_type.
template <const EncoderSpec& kSpec>
ArchitectureBuilder Row(std::string_view model_type) {
  return {model_type, "", BuildRow<BuildEncoder, kSpec>, model_type};
}

// --- BERT and its copies (4.42 and current agree) ---------------------------------------------
// transformers modeling_bert.py: <prefix>.embeddings.{word,position,token_type}_embeddings +
// LayerNorm + the non-persistent int64 [1, max_position_embeddings] buffers position_ids and
// token_type_ids; encoder.layer.N (a crossattention block with add_cross_attention); the pooler,
// which the base AutoModel (accelerate's view) always has. Heads: cls.predictions (the
// BertLMPredictionHead: transform, decoder tied to the word embeddings, own bias),
// cls.seq_relationship, classifier, qa_outputs. _no_split_modules (4.42): BertEmbeddings,
// BertLayer.
constexpr EncoderHead kBertHeads[] = {
    {.suffix = "Model", .pooler = true},
    {.suffix = "ForMaskedLM", .mlm = true},
    {.suffix = "ForSequenceClassification", .pooler = true, .out = "classifier"},
    {.suffix = "ForTokenClassification", .out = "classifier"},
    {.suffix = "ForQuestionAnswering", .out = "qa_outputs"},
    {.suffix = "ForMultipleChoice", .pooler = true, .out = "classifier", .out_dim = HeadDim::kOne},
    {.suffix = "ForCausalLM", .mlm = true, .listed = false},
    {.suffix = "LMHeadModel", .mlm = true, .listed = false},
    {.suffix = "ForPreTraining", .pooler = true, .mlm = true, .out = "cls.seq_relationship",
     .out_dim = HeadDim::kTwo, .listed = false},
    {.suffix = "ForNextSentencePrediction", .pooler = true, .out = "cls.seq_relationship",
     .out_dim = HeadDim::kTwo, .listed = false}};
constexpr EncoderSpec kBert{
    .type_prefix = "Bert", .prefix = "bert", .token_type_ids = true,
    .names = {.cross = "crossattention", .cross_norm = "crossattention.output.LayerNorm"},
    .pooler = "pooler.dense",
    .mlm = {.dense = "cls.predictions.transform.dense",
            .norm = "cls.predictions.transform.LayerNorm",
            .decoder = "cls.predictions.decoder.weight", .bias = "cls.predictions.bias",
            .decoder_bias = "cls.predictions.decoder.bias"},
    .heads = kBertHeads, .no_split = {"embeddings", "encoder.layer.*"}};

// modeling_roberta.py / modeling_xlm_roberta.py: BERT's layout; the pooler only under the base
// model and multiple choice. Heads: lm_head (dense, layer_norm, decoder tied, bias),
// classifier.{dense,out_proj}, classifier, qa_outputs. _no_split_modules (4.42):
// ["...Embeddings", "...SelfAttention", "...SdpaSelfAttention"].
constexpr EncoderHead kRobertaHeads[] = {
    {.suffix = "Model", .pooler = true},
    {.suffix = "ForMaskedLM", .mlm = true},
    {.suffix = "ForSequenceClassification", .dense = "classifier.dense",
     .out = "classifier.out_proj"},
    {.suffix = "ForTokenClassification", .out = "classifier"},
    {.suffix = "ForQuestionAnswering", .out = "qa_outputs"},
    {.suffix = "ForMultipleChoice", .pooler = true, .out = "classifier", .out_dim = HeadDim::kOne},
    {.suffix = "ForCausalLM", .mlm = true, .listed = false}};
constexpr MlmNames kRobertaLmHead{.dense = "lm_head.dense", .norm = "lm_head.layer_norm",
                                  .decoder = "lm_head.decoder.weight", .bias = "lm_head.bias",
                                  .decoder_bias = "lm_head.decoder.bias"};
constexpr EncoderSpec kRoberta{
    .type_prefix = "Roberta", .prefix = "roberta", .token_type_ids = true,
    .names = kBert.names, .pooler = "pooler.dense", .mlm = kRobertaLmHead,
    .heads = kRobertaHeads, .no_split = {"embeddings", "encoder.layer.*.attention.self"}};
constexpr EncoderSpec kXlmRoberta{
    .type_prefix = "XLMRoberta", .prefix = "roberta", .token_type_ids = true,
    .names = kBert.names, .pooler = "pooler.dense", .mlm = kRobertaLmHead,
    .heads = kRobertaHeads, .no_split = {"embeddings", "encoder.layer.*.attention.self"}};

// modeling_electra.py: embeddings of their own width ("embedding_size", 128), projected to
// hidden_size by embeddings_project when different; no pooler. Heads: the generator
// (generator_predictions.{LayerNorm,dense}, generator_lm_head tied, own bias), the discriminator
// (discriminator_predictions.{dense,dense_prediction}), classifier.{dense,out_proj}, classifier,
// qa_outputs. Multiple choice is named among the known classes but not built.
// _no_split_modules: none (4.42).
constexpr EncoderHead kElectraHeads[] = {
    {.suffix = "Model"},
    {.suffix = "ForMaskedLM", .mlm = true},
    {.suffix = "ForSequenceClassification", .dense = "classifier.dense",
     .out = "classifier.out_proj"},
    {.suffix = "ForTokenClassification", .out = "classifier"},
    {.suffix = "ForQuestionAnswering", .out = "qa_outputs"},
    {.suffix = "ForMultipleChoice", .refused = true},
    {.suffix = "ForCausalLM", .mlm = true, .listed = false},
    {.suffix = "ForPreTraining", .dense = "discriminator_predictions.dense",
     .out = "discriminator_predictions.dense_prediction", .out_dim = HeadDim::kOne,
     .listed = false}};
constexpr EncoderSpec kElectra{
    .type_prefix = "Electra", .prefix = "electra", .embed_key = "embedding_size",
    .embed_default = 128, .token_type_ids = true, .embed_proj = EmbedProj::kAfter,
    .names = kBert.names,
    .mlm = {.dense = "generator_predictions.dense", .norm = "generator_predictions.LayerNorm",
            .decoder = "generator_lm_head.weight", .bias = "generator_lm_head.bias",
            .norm_first = true},
    .heads = kElectraHeads};

// modeling_distilbert.py: distilbert.embeddings.{word_embeddings, position_embeddings (a
// parameter also when sinusoidal_pos_embds), LayerNorm} + position_ids; transformer.layer.N.
// {attention.{q,k,v,out}_lin, sa_layer_norm, ffn.lin1, ffn.lin2, output_layer_norm}. No pooler.
// Heads: vocab_transform/vocab_layer_norm/vocab_projector (tied, own bias), pre_classifier +
// classifier, classifier, qa_outputs (num_labels must be 2). No _no_split_modules (4.42).
constexpr EncoderHead kDistilBertHeads[] = {
    {.suffix = "Model"},
    {.suffix = "ForMaskedLM", .mlm = true},
    {.suffix = "ForSequenceClassification", .dense = "pre_classifier", .out = "classifier"},
    {.suffix = "ForTokenClassification", .out = "classifier"},
    {.suffix = "ForQuestionAnswering", .out = "qa_outputs", .out_dim = HeadDim::kLabels2},
    {.suffix = "ForMultipleChoice", .dense = "pre_classifier", .out = "classifier",
     .out_dim = HeadDim::kOne}};
constexpr EncoderSpec kDistilBert{
    .type_prefix = "DistilBert", .prefix = "distilbert", .config = EncoderConfig::kDistilBert,
    .hidden_key = "dim", .layers_key = "n_layers", .heads_key = "n_heads",
    .ffn_key = "hidden_dim", .act_key = "activation", .type_vocab_key = "",
    .layers = "transformer.layer",
    .names = {.proj = {".q_lin", ".k_lin", ".v_lin", ".out_lin"}, .self_norm = "sa_layer_norm",
              .up = "ffn.lin1", .down = "ffn.lin2", .ffn_norm = "output_layer_norm"},
    .mlm = {.dense = "vocab_transform", .norm = "vocab_layer_norm",
            .decoder = "vocab_projector.weight", .bias = "vocab_projector.bias"},
    .heads = kDistilBertHeads};

// DeBERTa-v2/v3, modeling_deberta_v2.py: deberta.embeddings.{word_embeddings [vocab,
// embedding_size], position_embeddings (when position_biased_input), token_type_embeddings (when
// type_vocab_size > 0), embed_proj (when embedding_size != hidden_size), LayerNorm} +
// position_ids; encoder.layer.N with attention.self.{query,key,value}_proj of heads x
// attention_head_size (+ pos_key_proj / pos_query_proj); encoder.rel_embeddings, LayerNorm, conv
// (EmitDebertaTail). Heads: cls.predictions (transform to embedding_size, tied), ContextPooler
// (pooler.dense of pooler_hidden_size) + classifier, classifier, qa_outputs. No _no_split_modules.
constexpr EncoderHead kDebertaV2Heads[] = {
    {.suffix = "Model"},
    {.suffix = "ForMaskedLM", .mlm = true},
    {.suffix = "ForSequenceClassification", .dense = "pooler.dense", .out = "classifier",
     .width = HeadDim::kPooler},
    {.suffix = "ForTokenClassification", .out = "classifier"},
    {.suffix = "ForQuestionAnswering", .out = "qa_outputs"}};
constexpr EncoderSpec kDebertaV2{
    .type_prefix = "DebertaV2", .prefix = "deberta", .config = EncoderConfig::kDebertaV2,
    .embed_key = "embedding_size", .type_vocab_default = 0, .embed_proj = EmbedProj::kBefore,
    .names = {.proj = {".self.query_proj", ".self.key_proj", ".self.value_proj", ".output.dense"}},
    .mlm = kBert.mlm, .heads = kDebertaV2Heads};

// --- T5: modeling_t5.py / modeling_mt5.py / modeling_umt5.py -----------------------------------
// shared [vocab, d_model]; encoder/decoder.embed_tokens share shared's module (tied, counted once);
// {encoder,decoder}.block.N.layer.0.SelfAttention.{q,k,v,o} (no biases) + relative_attention_bias
// [relative_attention_num_buckets, num_heads] in block 0 (every block for umt5), layer_norm
// (RMS, weight only); the decoder's layer.1.EncDecAttention; DenseReluDense.{wi | wi_0, wi_1 for
// gated-*, wo}; {encoder,decoder}.final_layer_norm; lm_head (tied to shared when
// tie_word_embeddings: t5 defaults to true, mt5 to false). No buffers. _no_split_modules =
// ["T5Block"] (MT5Block, UMT5Block); the modules are not prefixed.
constexpr LayerNames kT5Layer{.self = "layer.{}.SelfAttention", .cross = "layer.{}.EncDecAttention",
                          .proj = {".q", ".k", ".v", ".o"}, .self_norm = "layer.{}.layer_norm",
                          .cross_norm = "layer.{}.layer_norm", .up = "layer.{}.DenseReluDense.wi",
                          .down = "layer.{}.DenseReluDense.wo", .ffn_norm = "layer.{}.layer_norm"};
constexpr EncoderHead kT5Heads[] = {{.suffix = "Model"},
                                           {.suffix = "ForConditionalGeneration", .lm_head = true},
                                           {.suffix = "EncoderModel", .encoder_only = true}};
constexpr EncoderSpec kT5{.type_prefix = "T5", .config = EncoderConfig::kT5, .shared = "shared",
                      .layers = "block", .names = kT5Layer, .final_norms = {"final_layer_norm"},
                      .heads = kT5Heads, .no_split = {"encoder.block.*", "decoder.block.*"}};
constexpr EncoderSpec kMt5{.type_prefix = "MT5", .config = EncoderConfig::kT5, .shared = "shared",
                       .tie_default = false, .layers = "block", .names = kT5Layer,
                       .final_norms = {"final_layer_norm"}, .heads = kT5Heads,
                       .no_split = {"encoder.block.*", "decoder.block.*"}};
constexpr EncoderSpec kUmt5{.type_prefix = "UMT5", .config = EncoderConfig::kT5, .shared = "shared",
                        .bias_every_layer = true, .layers = "block", .names = kT5Layer,
                        .final_norms = {"final_layer_norm"}, .heads = kT5Heads,
                        .no_split = {"encoder.block.*", "decoder.block.*"}};

// --- BART: modeling_bart.py / modeling_mbart.py ------------------------------------------------
// [model.]shared; encoder and decoder each with embed_tokens (shares shared's weight: assigned as
// a parameter, so accelerate's init_empty_weights breaks the tie and counts it again),
// embed_positions [max_position_embeddings + 2, d_model] (the learned positions are offset by 2),
// layers.N.{self_attn.{k,v,q,out}_proj, self_attn_layer_norm, [encoder_attn.*,
// encoder_attn_layer_norm,] fc1, fc2, final_layer_norm}, layernorm_embedding, and for mBART a
// final layer_norm. BartForConditionalGeneration adds the persistent buffer final_logits_bias
// [1, vocab] and lm_head (tied to shared); classification_head.{dense,out_proj}; qa_outputs.
// _no_split_modules = ["BartEncoderLayer", "BartDecoderLayer"] (MBart likewise).
constexpr LayerNames kBartLayer{.self = "self_attn", .cross = "encoder_attn",
                            .proj = {".q_proj", ".k_proj", ".v_proj", ".out_proj"},
                            .kvq_order = true, .self_norm = "self_attn_layer_norm",
                            .cross_norm = "encoder_attn_layer_norm", .up = "fc1", .down = "fc2",
                            .ffn_norm = "final_layer_norm"};
constexpr EncoderHead kBartHeads[] = {
    {.suffix = "Model"},
    {.suffix = "ForConditionalGeneration", .lm_head = true},
    {.suffix = "ForSequenceClassification", .dense = "classification_head.dense",
     .out = "classification_head.out_proj"},
    {.suffix = "ForQuestionAnswering", .out = "qa_outputs", .out_dim = HeadDim::kTwo}};
constexpr EncoderSpec kBart{
    .type_prefix = "Bart", .prefix = "model", .config = EncoderConfig::kBart, .shared = "shared",
    .tokens = Tokens::kSharedBrokenOnMeta, .positions_offset = 2, .layers = "layers",
    .names = kBartLayer, .final_norms = {"layernorm_embedding"}, .final_logits_bias = true,
    .heads = kBartHeads, .no_split = {"encoder.layers.*", "decoder.layers.*"}};
constexpr EncoderSpec kMbart{
    .type_prefix = "MBart", .prefix = "model", .config = EncoderConfig::kBart, .shared = "shared",
    .tokens = Tokens::kSharedBrokenOnMeta, .positions_offset = 2, .layers = "layers",
    .names = kBartLayer, .final_norms = {"layernorm_embedding", "layer_norm"},
    .final_logits_bias = true, .heads = kBartHeads,
    .no_split = {"encoder.layers.*", "decoder.layers.*"}};

// modeling_whisper.py: model.encoder.{conv1 Conv1d(num_mel_bins, d, 3), conv2 Conv1d(d, d, 3),
// embed_positions [max_source_positions, d] (sinusoidal values, but an nn.Embedding parameter),
// layers.N, layer_norm}; model.decoder.{embed_tokens, embed_positions [max_target_positions, d],
// layers.N (with encoder_attn), layer_norm}; BART's layer names, but k_proj has no bias.
// WhisperForConditionalGeneration adds proj_out, tied to the decoder's embed_tokens.
// _no_split_modules = ["WhisperEncoderLayer", "WhisperDecoderLayer"].
constexpr EncoderHead kWhisperHeads[] = {{.suffix = "Model"},
                                         {.suffix = "ForConditionalGeneration", .lm_head = true}};
constexpr EncoderSpec kWhisper{
    .type_prefix = "Whisper", .prefix = "model", .config = EncoderConfig::kBart,
    .tokens = Tokens::kOwn, .mel_frontend = true, .src_positions_key = "max_source_positions",
    .tgt_positions_key = "max_target_positions", .src_positions_default = 1500,
    .tgt_positions_default = 448, .key_bias = false, .layers = "layers", .names = kBartLayer,
    .final_norms = {"layer_norm"}, .lm_head = "proj_out", .heads = kWhisperHeads,
    .no_split = {"encoder.layers.*", "decoder.layers.*"}};

}  // namespace

const std::vector<ArchitectureBuilder>& EncoderFamilyBuilders() {
  static const std::vector<ArchitectureBuilder> kRows = {
      Row<kBert>("bert"), Row<kRoberta>("roberta"), Row<kXlmRoberta>("xlm-roberta"),
      Row<kElectra>("electra"), Row<kDistilBert>("distilbert"), Row<kDebertaV2>("deberta-v2"),
      Row<kT5>("t5"), Row<kMt5>("mt5"), Row<kUmt5>("umt5"), Row<kBart>("bart"),
      Row<kMbart>("mbart"), Row<kWhisper>("whisper")};
  return kRows;
}

}  // namespace memfit::arch
