// The builder registry: model_type (and architectures[0] where a type has several heads) ->
// builder. To add an architecture: write src/model/arch/<family>.cc, declare its function in
// families.h, add a row here, add tests (docs/ARCHITECTURE.md, "Adding an architecture").

#include "memfit/architecture.h"
#include "model/arch/families.h"

namespace memfit {

const std::vector<ArchitectureBuilder>& ArchitectureBuilders() {
  static const std::vector<ArchitectureBuilder> kBuilders = {
      {"llama", "", arch::BuildLlama, "llama"},
      {"mistral", "", arch::BuildMistral, "mistral"},
      {"mixtral", "", arch::BuildMixtral, "mixtral"},
      {"qwen2", "", arch::BuildQwen2, "qwen2"},
      {"qwen3", "", arch::BuildQwen3, "qwen3"},
      {"qwen3_moe", "", arch::BuildQwen3Moe, "qwen3_moe"},
      {"gpt2", "", arch::BuildGpt2, "gpt2"},
      {"gpt_neox", "", arch::BuildGptNeox, "gpt_neox"},
      {"gptj", "", arch::BuildGptj, "gptj"},
      {"gpt_bigcode", "", arch::BuildGptBigcode, "gpt_bigcode"},
      {"opt", "", arch::BuildOpt, "opt"},
      {"bloom", "", arch::BuildBloom, "bloom"},
      {"falcon", "", arch::BuildFalcon, "falcon"},
      {"RefinedWeb", "", arch::BuildFalcon, "falcon"},
      {"RefinedWebModel", "", arch::BuildFalcon, "falcon"},
      {"mpt", "", arch::BuildMpt, "mpt"},
  };
  return kBuilders;
}

const ArchitectureBuilder* FindArchitectureBuilder(std::string_view model_type,
                                                   std::string_view architecture) {
  const auto& builders = ArchitectureBuilders();
  for (const auto& b : builders) {
    if (b.model_type == model_type && !b.architecture.empty() && b.architecture == architecture) {
      return &b;
    }
  }
  for (const auto& b : builders) {
    if (b.model_type == model_type && b.architecture.empty()) return &b;
  }
  return nullptr;
}

Result<Model> BuildFromConfig(const HfConfig& config, const BuildOptions& options) {
  std::string type = config.model_type();
  if (type.empty()) {
    return MakeError("{}: no \"model_type\": memfit cannot tell the architecture; reading the "
                     "safetensors or GGUF headers gives an exact answer for any model",
                     config.where());
  }
  auto archs = config.architectures();
  const auto* builder = FindArchitectureBuilder(type, archs.empty() ? "" : archs.front());
  if (!builder) {
    return MakeError("{}: model_type \"{}\" is not supported by memfit's config-only builders; "
                     "point memfit at the model's .safetensors or .gguf files (or a Hub repo that "
                     "has them) for an exact answer from the headers",
                     config.where(), type);
  }
  return builder->build(config, options);
}

}  // namespace memfit
