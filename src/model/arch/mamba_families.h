#pragma once
// The pure state-space families (mamba_families.cc: mamba, falcon_mamba, mamba2) and Jamba
// (jamba.cc). Kept out of families.h so that adding them does not rebuild every builder; the
// registry includes both.

#include "memfit/architecture.h"

namespace memfit::arch {

Result<Model> BuildMamba(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildFalconMamba(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildMamba2(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildJamba(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
