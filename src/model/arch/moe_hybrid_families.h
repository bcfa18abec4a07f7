#pragma once
// Builders for ERNIE 4.5 MoE (ernie4_5_moe.cc), Hunyuan MoE V1 (hunyuan_moe.cc) and DBRX
// (dbrx.cc). Kept out of families.h so that adding them does not rebuild every builder;
// the registry includes both.

#include "memfit/architecture.h"

namespace memfit::arch {

Result<Model> BuildErnie45Moe(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildHunYuanMoe(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildDbrx(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
