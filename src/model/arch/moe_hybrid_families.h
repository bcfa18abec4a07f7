#pragma once
// Builders for Falcon-H1 (falcon_h1.cc) and DBRX (dbrx.cc). Kept out of families.h so that adding
// them does not rebuild every builder; the registry includes both.

#include "memfit/architecture.h"

namespace memfit::arch {

Result<Model> BuildFalconH1(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildDbrx(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
