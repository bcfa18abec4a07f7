#pragma once
// The Qwen omni models (thinker with vision and audio towers; talker; speech decoder), declared
// apart from families.h and vlm_families.h so that adding them rebuilds no other builder.

#include "memfit/architecture.h"

namespace memfit::arch {

// qwen2_5_omni.cc: Qwen2.5-Omni (Qwen2_5OmniForConditionalGeneration / Qwen2_5OmniModel):
// thinker (qwen2 text, Qwen2.5-VL-style vision, Whisper-style audio), talker, token2wav (DiT +
// BigVGAN).
Result<Model> BuildQwen25Omni(const HfConfig& config, const BuildOptions& options);
// qwen3_omni_moe.cc: Qwen3-Omni (Qwen3OmniMoeForConditionalGeneration): thinker (qwen3_moe text,
// Qwen3-VL-style vision, conv2d audio), talker (MoE with a shared expert, code predictor),
// code2wav.
Result<Model> BuildQwen3OmniMoe(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
