// The builder registry: model_type (and architectures[0] where a type has several heads) ->
// builder. To add an architecture: write src/model/arch/<family>.cc, declare its function in
// families.h, add a row here, add tests (docs/ARCHITECTURE.md, "Adding an architecture").

#include "memfit/architecture.h"
#include "model/arch/builder_kit.h"
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
      // Encoders and encoder-decoders.
      {"bert", "", arch::BuildBert, "bert"},
      {"roberta", "", arch::BuildRoberta, "roberta"},
      {"xlm-roberta", "", arch::BuildXlmRoberta, "xlm-roberta"},
      {"electra", "", arch::BuildElectra, "electra"},
      {"distilbert", "", arch::BuildDistilBert, "distilbert"},
      {"deberta-v2", "", arch::BuildDebertaV2, "deberta-v2"},
      {"t5", "", arch::BuildT5, "t5"},
      {"mt5", "", arch::BuildMt5, "mt5"},
      {"umt5", "", arch::BuildUmt5, "umt5"},
      {"bart", "", arch::BuildBart, "bart"},
      {"mbart", "", arch::BuildMbart, "mbart"},
      {"whisper", "", arch::BuildWhisper, "whisper"},
      // Vision and multimodal.
      {"vit", "", arch::BuildVit, "vit"},
      {"clip", "", arch::BuildClip, "clip"},
      {"siglip", "", arch::BuildSiglip, "siglip"},
      {"resnet", "", arch::BuildResnet, "resnet"},
      {"llava", "", arch::BuildLlava, "llava"},
      {"idefics", "", arch::BuildIdefics, "idefics"},
      {"timm", "", arch::BuildTimm, "timm"},  // configs without model_type, see BuildFromConfig
      {"gemma", "", arch::BuildGemma, "gemma"},
      {"gemma2", "", arch::BuildGemma2, "gemma"},
      {"gemma3_text", "", arch::BuildGemma3Text, "gemma"},
      {"phi3", "", arch::BuildPhi3, "phi3"},
      {"phimoe", "", arch::BuildPhiMoe, "phi3"},
      {"phi", "", arch::BuildPhi, "phi"},
      {"stablelm", "", arch::BuildStableLm, "stablelm"},
      {"starcoder2", "", arch::BuildStarcoder2, "starcoder2"},
      {"granite", "", arch::BuildGranite, "granite"},
      {"granitemoe", "", arch::BuildGraniteMoe, "granite"},
      {"granitemoeshared", "", arch::BuildGraniteMoeShared, "granite"},
      {"olmo", "", arch::BuildOlmo, "olmo"},
      {"olmo2", "", arch::BuildOlmo2, "olmo"},
      {"cohere", "", arch::BuildCohere, "cohere"},
      {"cohere2", "", arch::BuildCohere2, "cohere"},
      {"internlm2", "", arch::BuildInternLm2, "internlm2"},
      {"qwen2_moe", "", arch::BuildQwen2Moe, "qwen2_moe"},
      {"deepseek_v2", "", arch::BuildDeepseekV2, "deepseek"},
      {"deepseek_v3", "", arch::BuildDeepseekV3, "deepseek"},
      {"gpt_oss", "", arch::BuildGptOss, "gpt_oss"},
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
  if (type.empty() && config.Has("architecture") && config.raw()["architecture"].is_string()) {
    type = "timm";  // timm's config.json names only the architecture
  }
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
  arch::TensorLimitScope limit(options.max_tensors);
  return builder->build(config, options);
}

}  // namespace memfit
