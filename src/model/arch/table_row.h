#pragma once
// A family table's row as an ArchitectureBuilderFn (issue 30): the skeleton kBuild (BuildDecoder,
// BuildClassic, BuildEncoder, BuildHybrid, BuildMla, ...) applied to the row kSpec, so that a
// registry row names its spec without a wrapper function of its own.

#include "memfit/architecture.h"

namespace memfit::arch {

// The rows of a builder whose only parameter is whether the multimodal model is built with its
// towers or its text model alone (gemma4 / gemma4_text, llama4 / llama4_text).
inline constexpr bool kMultimodal = true;
inline constexpr bool kTextOnly = false;

template <auto kBuild, const auto& kSpec>
Result<Model> BuildRow(const HfConfig& config, const BuildOptions& options) {
  return kBuild(config, options, kSpec);
}

}  // namespace memfit::arch
