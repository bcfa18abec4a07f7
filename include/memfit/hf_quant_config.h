#pragma once
// NVIDIA ModelOpt's hf_quant_config.json, the file beside config.json that describes a ModelOpt
// checkpoint's quantization (NVFP4, FP8, MIXED_PRECISION) when config.json has no
// "quantization_config" (the NVFP4 releases of Nemotron-3, DeepSeek-V3.2, GLM-5, Qwen3).

#include <string>
#include <string_view>

#include "memfit/hf_config.h"
#include "memfit/result.h"

namespace memfit {

// `config` with hf_quant_config.json's "quantization" object added as its quantization_config
// ({"quant_method": "modelopt", "quant_algo", "exclude_modules", "quantized_layers", ...}). A
// config that already has one is returned unchanged (config.json wins). `where` names the file.
Result<HfConfig> MergeHfQuantConfig(const HfConfig& config, std::string_view hf_quant_config_json,
                                    const std::string& where);

}  // namespace memfit
