#pragma once
// The registry rows of the MLA families (mla_families.cc): the MlaFamilySpec rows (mla_kit.h) and
// LongCat-Flash, outside families.h so that declaring them rebuilds only the registry.

#include <vector>

#include "memfit/architecture.h"

namespace memfit::arch {

const std::vector<ArchitectureBuilder>& MlaFamilyBuilders();

}  // namespace memfit::arch
