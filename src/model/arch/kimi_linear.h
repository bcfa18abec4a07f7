#pragma once
// The Kimi Linear text model (kimi_linear.cc), shared by model_type "kimi_linear"
// (KimiLinearForCausalLM) and Kimi-K3's language model (kimi_k25.cc).

#include "memfit/architecture.h"

namespace memfit::arch {

// Which release's stored layout the text model takes where the two differ (docs/architectures.md,
// "kimi_linear"): Kimi-Linear-48B keeps A_log as [1, 1, num_heads, 1]; Kimi-K3's checkpoint holds
// A_log as float32 [head_dim].
enum class KimiCheckpoint : uint8_t { kKimiLinear, kKimiK3 };

Result<Model> BuildKimiLinearText(const HfConfig& config, const BuildOptions& options,
                                  KimiCheckpoint layout);

}  // namespace memfit::arch
