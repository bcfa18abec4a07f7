#pragma once
// Builders that are not table rows of families.h, in a header of their own so that a new
// declaration does not rebuild every builder.

#include <optional>

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"

namespace memfit::arch {

// DBRX (dbrx.cc).
Result<Model> BuildDbrx(const HfConfig& config, const BuildOptions& options);
// LFM2-MoE (a HybridSpec row, hybrid_families.cc): LFM2's layers with dense-first routed experts.
Result<Model> BuildLfm2Moe(const HfConfig& config, const BuildOptions& options);

// A config whose model_type has no builder but whose "text_config" names a model_type that has
// one (generic_decoder.cc): that text model, built exactly under model.language_model.* /
// lm_head, with an assumption that the rest (towers, projectors) is not counted; labelled
// approximate. nullopt when the config has no such text_config.
std::optional<Result<Model>> BuildNestedTextModel(const HfConfig& config,
                                                  const BuildOptions& options);

}  // namespace memfit::arch
