#pragma once
// Helpers shared by the encoder and encoder-decoder builders (bert.cc, distilbert.cc, t5.cc,
// bart.cc, whisper.cc, vit.cc, clip.cc): head-class selection, num_labels, per-layer facts.

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "memfit/architecture.h"
#include "model/arch/builder_kit.h"

namespace memfit::arch {

// The class to build: options.head_class mapped onto the family ("AutoModelForMaskedLM" ->
// "<prefix>ForMaskedLM", "AutoModel" -> `base`), else architectures[0], else `base`.
std::string HeadClass(const HfConfig& config, const BuildOptions& options,
                      std::string_view prefix, std::string_view base);

// transformers' PretrainedConfig.num_labels: len(id2label) when present, else "num_labels",
// else 2.
uint64_t NumLabels(ModelBuilder& b, const HfConfig& config);

// The error for a head class a builder does not know.
Error UnknownHead(const HfConfig& config, std::string_view cls, std::string_view known);
// UnknownHead naming `known` (", "-separated, in order) when `cls` is none of them; else nothing.
std::optional<Error> CheckHeadClass(const HfConfig& config, std::string_view cls,
                                    std::initializer_list<std::string_view> known);

// The config keys of a BERT-style encoder's hyperparameters (DistilBERT's are dim, n_layers,
// n_heads, hidden_dim and activation).
struct EncoderKeys {
  std::string_view hidden = "hidden_size";
  std::string_view layers = "num_hidden_layers";
  std::string_view heads = "num_attention_heads";
  std::string_view intermediate = "intermediate_size";
  std::string_view activation = "hidden_act";
};

// Reads a BERT-style encoder's vocab_size, hidden size, layers, heads (as many KV heads),
// intermediate size, max_position_embeddings (default 512) and activation (default "gelu") into
// model.hp, with LayerNorm (bert, deberta-v2, distilbert). Errors are recorded in `b`.
void ReadEncoderBasics(ModelBuilder& b, const HfConfig& c, const EncoderKeys& keys = {});

// The encoder's sizes in a BART-style encoder-decoder config (BartConfig, MBartConfig,
// WhisperConfig).
struct BartEncoderSizes {
  uint64_t heads = 0;  // "encoder_attention_heads"
  uint64_t ffn = 0;    // "encoder_ffn_dim"
};

// Reads a BART-style config's encoder_layers and decoder_layers, encoder_/decoder_attention_heads
// and encoder_/decoder_ffn_dim: the layer counts and the decoder's sizes into model.hp (as many KV
// heads as heads), the encoder's returned. Errors are recorded in `b`.
BartEncoderSizes ReadBartLayerSizes(ModelBuilder& b, const HfConfig& c);

// The rest of a BART-style config once its positions are read: tie_word_embeddings (default
// true), activation_function (default "gelu"), LayerNorm, encoder-decoder; then, when nothing has
// failed, d_model must divide by both sides' heads (head_dim is the decoder's). Errors are
// recorded in `b`.
void ReadBartTail(ModelBuilder& b, const HfConfig& c, uint64_t encoder_heads);

// One BART-style encoder or decoder layer under `layer` (BART, mBART, Whisper):
// self_attn.{k,v,q,out}_proj [d, d] (k_proj's bias `k_bias`: Whisper's has none),
// self_attn_layer_norm, a decoder's encoder_attn (likewise) and encoder_attn_layer_norm, fc1,
// fc2 (`ffn` wide) and final_layer_norm. A decoder layer also adds its LayerInfo to model.hp
// (the decoder's heads and head_dim, with cross-attention).
void EmitBartLayer(ModelBuilder& b, const std::string& layer, uint64_t d, uint64_t ffn,
                   bool decoder, bool k_bias);

// One LayerInfo per encoder (or decoder) layer with `heads` heads of `head_dim`.
LayerInfo DenseLayer(AttentionKind kind, uint64_t heads, uint64_t head_dim, uint64_t intermediate);

// Marks the tensor just emitted as a tie that init_empty_weights breaks (accelerate counts it).
void MarkTieBrokenOnMeta(ModelBuilder& b);

// Number of image patches from "image_size" and "patch_size" (each an int or [height, width]).
Result<uint64_t> ImagePatches(const HfConfig& config, std::string_view image_key,
                              std::string_view patch_key, uint64_t image_default,
                              uint64_t patch_default);

// A CLIP or SigLIP vision transformer under `prefix` (e.g. "vision_model" or
// "vision_tower.vision_model") from its vision config, with transformers' config-class defaults.
// SigLIP: patch embedding with a bias, no class token, optional attention-pooling head.
// Returns the hidden size (0 after an error, recorded in `b`). `position_ids`: the
// non-persistent position_ids buffer (Idefics2/3's NaViT-style embeddings register none).
uint64_t EmitClipVision(ModelBuilder& b, const HfConfig& vision, const std::string& prefix,
                        bool siglip, bool position_ids = true);

// nn.BatchNorm2d(channels): weight, bias, and the persistent buffers running_mean, running_var
// (checkpoint dtype) and num_batches_tracked (int64 scalar).
void BatchNorm(ModelBuilder& b, const std::string& prefix, uint64_t channels);

}  // namespace memfit::arch
