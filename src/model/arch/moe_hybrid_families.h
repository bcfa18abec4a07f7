#pragma once
// The builder of DBRX (dbrx.cc). Kept out of families.h so that adding it does not rebuild every
// builder; the registry includes it.

#include "memfit/architecture.h"

namespace memfit::arch {

Result<Model> BuildDbrx(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit::arch
