#pragma once
// The GLM vision-language family (glm4v.cc): GLM-4.1V-Thinking and GLM-4.6V-Flash ("glm4v",
// Glm4vForConditionalGeneration, a glm4 text model) and GLM-4.5V / GLM-4.6V ("glm4v_moe",
// Glm4vMoeForConditionalGeneration, a glm4_moe text model), each with the AIMv2-style vision tower
// under model.visual. Kept apart from families.h so that adding it does not rebuild every builder.

#include "memfit/architecture.h"

namespace memfit::arch {

Result<Model> BuildGlm4v(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildGlm4vMoe(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
