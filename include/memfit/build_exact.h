#pragma once
// Config-only building without the generic decoder fallback: an exact builder (by model_type, or
// by a class memfit builds) or an error. DescribeModel uses it when safetensors headers give the
// exact tensors and only the layer structure is wanted from config.json.

#include "memfit/architecture.h"

namespace memfit {

Result<Model> BuildExactFromConfig(const HfConfig& config, const BuildOptions& options);

}  // namespace memfit
