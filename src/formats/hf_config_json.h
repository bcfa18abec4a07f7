#pragma once
// HfConfig's JSON for library code: the accessors that hand out nlohmann::json, kept out of the
// public header (memfit/hf_config.h) so that no public header names a JSON library (issue 18).

#include "formats/json.h"
#include "memfit/hf_config.h"

namespace memfit {

// "quantization_config" when present as an object, else nullptr; points into `config`.
const nlohmann::json* QuantizationConfigJson(const HfConfig& config);

}  // namespace memfit
