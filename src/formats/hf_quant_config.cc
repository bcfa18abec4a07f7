#include "memfit/hf_quant_config.h"

#include "formats/json.h"

namespace memfit {

Result<HfConfig> MergeHfQuantConfig(const HfConfig& config, std::string_view text,
                                    const std::string& where) {
  if (config.Has("quantization_config")) return config;
  MEMFIT_ASSIGN_OR_RETURN(nlohmann::json json,
                          ParseJson(text, where, JsonLimits{.max_bytes = 16'000'000}));
  if (!json.is_object() || !json.contains("quantization") || !json["quantization"].is_object()) {
    return MakeError("{}: expected an object with a \"quantization\" object", where);
  }
  nlohmann::json quant = json["quantization"];
  quant["quant_method"] = "modelopt";
  nlohmann::json merged = config.raw();
  merged["quantization_config"] = std::move(quant);
  return HfConfig::FromJson(std::move(merged), config.where());
}

}  // namespace memfit
