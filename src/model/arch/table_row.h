#pragma once
// A family table's row as an ArchitectureBuilderFn (issue 30): the skeleton kBuild (BuildDecoder,
// BuildClassic, BuildEncoder, BuildHybrid, BuildMla) applied to the row kSpec, so that a registry
// row names its spec without a wrapper function of its own.

#include "memfit/architecture.h"

namespace memfit::arch {

template <auto kBuild, const auto& kSpec>
Result<Model> BuildRow(const HfConfig& config, const BuildOptions& options) {
  return kBuild(config, options, kSpec);
}

}  // namespace memfit::arch
