#pragma once
// Builders and pieces added for issue 30 that are not DecoderSpec rows, in a header of their own so
// that a new declaration does not rebuild every builder (as moe_hybrid_families.h).

#include <cstdint>
#include <optional>
#include <string>

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"

namespace memfit::arch {

class ModelBuilder;

// LFM2-MoE (a HybridSpec row, hybrid_families.cc): LFM2's layers with dense-first routed experts.
Result<Model> BuildLfm2Moe(const HfConfig& config, const BuildOptions& options);

// Qwen4-Exp (qwen4_exp.cc): hyper-connection streams, QSA-indexed attention between gated
// delta-net layers, per-layer n-gram embedding tables; qwen4_exp_text is its text model alone.
Result<Model> BuildQwen4Exp(const HfConfig& config, const BuildOptions& options);
Result<Model> BuildQwen4ExpText(const HfConfig& config, const BuildOptions& options);

// A config whose model_type has no builder but whose "text_config" names a model_type that has
// one (generic_decoder.cc): that text model, built exactly under model.language_model.* /
// lm_head, with an assumption that the rest (towers, projectors) is not counted; labelled
// approximate. nullopt when the config has no such text_config.
std::optional<Result<Model>> BuildNestedTextModel(const HfConfig& config,
                                                  const BuildOptions& options);

}  // namespace memfit::arch
