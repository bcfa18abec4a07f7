#pragma once
// Every architecture builder, one function per family; registry.cc maps model_type to them.

#include "memfit/architecture.h"

namespace memfit::arch {

Result<Model> BuildLlama(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildMistral(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen3(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildMixtral(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen3Moe(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
