#pragma once
// Vision-language builders that compose an existing decoder family with a vision tower
// (multimodal_kit.h); registry.cc maps model_type to them. Kept apart from families.h so that
// adding one does not rebuild every builder.

#include "memfit/architecture.h"

namespace memfit::arch {

// gemma3.cc: SigLIP vision + gemma3_text (Gemma3ForConditionalGeneration).
Result<Model> BuildGemma3(const HfConfig& config, const BuildOptions& options);
// PaliGemma (a VlmSpec row of vlm_families.cc): SigLIP vision + gemma/gemma2
// (PaliGemmaForConditionalGeneration).
Result<Model> BuildPaliGemma(const HfConfig& config, const BuildOptions& options);
// Mistral 3 (a VlmSpec row): Pixtral vision (a row of vision_tower.cc) + mistral
// (Mistral3ForConditionalGeneration).
Result<Model> BuildMistral3(const HfConfig& config, const BuildOptions& options);

// LLaVA-NeXT and its video / OneVision variants (VlmSpec rows): CLIP or SigLIP vision + a
// registered decoder, projector and image_newline.
Result<Model> BuildLlavaNext(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildLlavaNextVideo(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildLlavaOnevision(const HfConfig& config, const BuildOptions& options);
// Idefics2 (a VlmSpec row): SigLIP-style vision + MLP connector + perceiver resampler + mistral.
Result<Model> BuildIdefics2(const HfConfig& config, const BuildOptions& options);
// mllama.cc: tiled ViT + llama with interleaved cross-attention layers (Llama 3.2 Vision).
Result<Model> BuildMllama(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
