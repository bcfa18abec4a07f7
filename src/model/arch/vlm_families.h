#pragma once
// Vision-language builders that compose a registered decoder family with a vision tower
// (multimodal_kit.h). Kept apart from families.h so that adding one does not rebuild every builder.

#include <vector>

#include "memfit/architecture.h"

namespace memfit::arch {

// The VlmSpec rows (vlm_families.cc: Gemma 3, PaliGemma, Mistral 3, LLaVA-NeXT (-Video,
// -OneVision), Idefics2, Idefics3, LFM2-VL) and the Qwen-VL ones (qwen_vision.h); appended to
// registry.cc's table.
const std::vector<ArchitectureBuilder>& VlmFamilyBuilders();
// mllama.cc: tiled ViT + llama with interleaved cross-attention layers (Llama 3.2 Vision).
Result<Model> BuildMllama(const HfConfig& config, const BuildOptions& options);
// glm4v.cc: GLM-4.1V-Thinking and GLM-4.6V-Flash ("glm4v", a glm4 text model) and GLM-4.5V /
// GLM-4.6V ("glm4v_moe", a glm4_moe text model), each with its vision tower under model.visual.
Result<Model> BuildGlm4v(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGlm4vMoe(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
