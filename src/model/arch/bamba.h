#pragma once
// The bamba builder (mamba2_hybrid.cc). Kept out of families.h so that adding it does not rebuild every
// builder; the registry includes both.

#include "memfit/architecture.h"

namespace memfit::arch {

Result<Model> BuildBamba(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
