#pragma once
// Helpers shared by the encoder and encoder-decoder builders (encoder_skeleton.cc, vit.cc,
// clip.cc, ...): head-class selection, num_labels, per-layer facts, vision towers.

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

// The error for a head class a builder does not know (`known`: ", "-separated).
Error UnknownHead(const HfConfig& config, std::string_view cls, std::string_view known);

// One LayerInfo per encoder (or decoder) layer with `heads` heads of `head_dim`.
LayerInfo DenseLayer(AttentionKind kind, uint64_t heads, uint64_t head_dim, uint64_t intermediate);

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

// nn.Conv2d(in, out, kernel) without bias under `conv`, then nn.BatchNorm2d(out) under `norm`:
// weight, bias and the persistent buffers running_mean, running_var (checkpoint dtype) and
// num_batches_tracked (int64 scalar) (resnet.cc, timm.cc).
void ConvBatchNorm(ModelBuilder& b, const std::string& conv, const std::string& norm, uint64_t in,
                   uint64_t out, uint64_t kernel);

}  // namespace memfit::arch
