// The builder registry: model_type (and architectures[0] where a type has several heads) ->
// builder. A decoder family is first a DecoderSpec row (decoder_families.cc, appended below;
// the state-space and hybrid ones HybridSpec rows, hybrid_families.cc);
// only a layout a spec cannot say gets src/model/arch/<family>.cc, its function in families.h
// and a row here (docs/ARCHITECTURE.md, "Adding an architecture").

#include "memfit/architecture.h"
#include "formats/hf_config_json.h"

#include <fmt/format.h>
#include <memory>

#include "model/arch/builder_kit.h"
#include "model/arch/classic_decoder.h"
#include "model/arch/decoder_spec.h"
#include "model/arch/encoder_spec.h"
#include "model/arch/families.h"
#include "model/arch/issue30_families.h"
#include "model/arch/gemma3n_family.h"
#include "model/arch/hybrid_spec.h"
#include "model/arch/mla_families.h"
#include "model/arch/mlx_quantization.h"
#include "model/arch/omni_kit.h"
#include "model/arch/phi4mm_family.h"
#include "model/arch/vlm_families.h"
#include "memfit/build_exact.h"
#include "model/tensor_repeats.h"

namespace memfit {
namespace {

// Classes whose model_type may be new while the architecture is one memfit builds exactly.
constexpr std::pair<std::string_view, std::string_view> kClassTypes[] = {
    {"DeepseekV3ForCausalLM", "deepseek_v3"}, {"DeepseekV2ForCausalLM", "deepseek_v2"},
    {"LlamaForCausalLM", "llama"},            {"MistralForCausalLM", "mistral"},
    {"MixtralForCausalLM", "mixtral"},        {"Qwen2ForCausalLM", "qwen2"},
    {"Qwen3ForCausalLM", "qwen3"},            {"Qwen3MoeForCausalLM", "qwen3_moe"},
    {"Qwen2MoeForCausalLM", "qwen2_moe"},     {"GptOssForCausalLM", "gpt_oss"},
    {"Gemma3ForCausalLM", "gemma3_text"},     {"Phi3ForCausalLM", "phi3"},
    {"GraniteForCausalLM", "granite"},        {"Olmo2ForCausalLM", "olmo2"},
};

}  // namespace

const std::vector<ArchitectureBuilder>& ArchitectureBuilders() {
  static const std::vector<ArchitectureBuilder> kBuilders = [] {
    std::vector<ArchitectureBuilder> rows = {
      // Vision and multimodal.
      {"vit", "", arch::BuildVit, "vit"},
      {"clip", "", arch::BuildClip, "clip"},
      {"siglip", "", arch::BuildSiglip, "siglip"},
      {"resnet", "", arch::BuildResnet, "resnet"},
      {"llava", "", arch::BuildLlava, "llava"},
      {"idefics", "", arch::BuildIdefics, "idefics"},
      {"timm", "", arch::BuildTimm, "timm"},  // configs without model_type, see BuildFromConfig
      {"mllama", "", arch::BuildMllama, "mllama"},
      // Phi-4-multimodal: remote code (with its LoRA adapters) and transformers' layout.
      {"phi4mm", "", arch::BuildPhi4Mm, "phi4mm"},
      {"phi4_multimodal", "", arch::BuildPhi4Multimodal, "phi4mm"},
      {"deepseek_v4", "", arch::BuildDeepseekV4, "deepseek_v4"},
      {"deepseek_ref", "", arch::BuildDeepseekV4, "deepseek_v4"},  // SGLang's V4 FP8 releases
      {"kimi_k25", "", arch::BuildKimiK25, "kimi_k25"},
      {"kimi_linear", "", arch::BuildKimiLinear, "kimi_linear"},
      {"kimi_k3", "", arch::BuildKimiK3, "kimi_linear"},
      {"minimax_m3", "", arch::BuildMiniMaxM3, "minimax_m3"},
      {"minimax_m3_vl", "", arch::BuildMiniMaxM3Vl, "minimax_m3"},
      {"mimo_v2_flash", "", arch::BuildRow<arch::BuildMiMo, arch::kMimoV2Flash>,
       "mimo_v2_flash"},
      {"mimo_v2", "", arch::BuildRow<arch::BuildMiMo, arch::kMimoV2>, "mimo_v2_flash"},
      {"nemotron-nas", "", arch::BuildNemotronNas, "nemotron_nas"},
      {"chatglm", "", arch::BuildChatGlm, "chatglm"},
      {"gemma3n", "", arch::BuildGemma3n, "gemma3n"},
      {"gemma3n_text", "", arch::BuildGemma3nText, "gemma3n"},
      {"gemma4", "", arch::BuildRow<arch::BuildGemma4, arch::kMultimodal>, "gemma4"},
      {"gemma4_text", "", arch::BuildRow<arch::BuildGemma4, arch::kTextOnly>, "gemma4"},
      {"llama4", "", arch::BuildRow<arch::BuildLlama4, arch::kMultimodal>, "llama4"},
      {"llama4_text", "", arch::BuildRow<arch::BuildLlama4, arch::kTextOnly>, "llama4"},
      {"qwen2_5_omni", "", arch::BuildQwen25Omni, "qwen_omni"},
      {"qwen3_omni_moe", "", arch::BuildQwen3OmniMoe, "qwen_omni"},
      {"qwen", "", arch::BuildQwen, "qwen"},
      {"glm4v", "", arch::BuildGlm4v, "glm4v"},
      {"glm4v_moe", "", arch::BuildGlm4vMoe, "glm4v"},
      {"dbrx", "", arch::BuildDbrx, "dbrx"},  // dbrx.cc: transformer.blocks, nested configs
    };
    const auto& specs = arch::DecoderFamilyBuilders();
    rows.insert(rows.end(), specs.begin(), specs.end());
    // Encoders and encoder-decoders: EncoderSpec rows (encoder_families.cc).
    // GPT-style decoders: ClassicDecoderSpec rows (classic_families.cc).
    const auto& classic = arch::ClassicFamilyBuilders();
    rows.insert(rows.end(), classic.begin(), classic.end());
    const auto& encoders = arch::EncoderFamilyBuilders();
    rows.insert(rows.end(), encoders.begin(), encoders.end());
    // MLA families (issue 30): MlaFamilySpec rows and LongCat-Flash (mla_families.cc).
    const auto& mla = arch::MlaFamilyBuilders();
    rows.insert(rows.end(), mla.begin(), mla.end());
    // State-space and hybrid decoders: HybridSpec rows (hybrid_families.cc).
    const auto& hybrids = arch::HybridFamilyBuilders();
    rows.insert(rows.end(), hybrids.begin(), hybrids.end());
    const auto& vlms = arch::VlmFamilyBuilders();  // vision-language rows (vlm_families.cc)
    rows.insert(rows.end(), vlms.begin(), vlms.end());
    return rows;
  }();
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

namespace {

// A compact run whose copies would be blocks of their own (no no-split module above them, as
// Qwen3.5's mtp.layers.0.mlp.experts) is written out: the block tree of a compact model must be
// the expanded one's.
Result<Model> KeepRepeatsOnlyInBlocks(Result<Model> model) {
  if (model) ExpandRepeatsOutsideBlocks(*model);
  return model;
}

Result<Model> BuildAny(const HfConfig& config, const BuildOptions& options, bool allow_generic) {
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
  const std::string arch = archs.empty() ? "" : archs.front();
  const auto* builder = FindArchitectureBuilder(type, arch);
  arch::TensorLimitScope limit(options.max_tensors);
  arch::CompactRepeatsScope compact(options.compact_repeats);
  if (builder) {
    auto model = builder->build(config, options);
    // An exact builder that cannot lay out this checkpoint's quantization (quantized fused
    // experts, a format it does not build): the generic builder answers, approximately, and says
    // why. Any other error (a missing or malformed field) stands.
    const auto refused_layout = [&](const Error& e) {
      return e.message.find("quantized fused experts") != std::string::npos ||
             e.message.find("ChatGLM-6B (v1) layout") != std::string::npos;
    };
    if (!model && allow_generic && refused_layout(model.error())) {
      auto generic = arch::BuildGenericDecoder(config, options);
      if (generic) {
        generic->assumptions.push_back("the exact builder could not lay out this checkpoint: " +
                                       model.error().message);
        return generic;
      }
    }
    return model;
  }
  // A new model_type whose class is one memfit builds (Kimi-K2 is "kimi_k2" with
  // DeepseekV3ForCausalLM): the class decides.
  for (const auto& [cls, known_type] : kClassTypes) {
    if (arch != cls) continue;
    const auto* by_class = FindArchitectureBuilder(known_type, "");
    if (!by_class) break;
    auto model = by_class->build(config, options);
    if (model) {
      model->assumptions.push_back(fmt::format("model_type \"{}\" built as \"{}\" (its class {})",
                                               type, known_type, arch));
    }
    return model;
  }
  // An unknown wrapper around a known text model (issue 30): that text model, exactly, the rest
  // not counted (approximate, and says so).
  if (allow_generic) {
    if (auto nested = arch::BuildNestedTextModel(config, options)) return std::move(*nested);
  }
  // Any other text generator: the generic decoder builder (approximate, and says so).
  if (allow_generic && (arch.empty() || arch.ends_with("ForCausalLM") || arch.ends_with("LMHeadModel") ||
      arch.ends_with("ForConditionalGeneration"))) {
    auto model = arch::BuildGenericDecoder(config, options);
    if (model) return model;
    return MakeError("{}; model_type \"{}\" has no exact builder either: point memfit at the "
                     "model's .safetensors or .gguf files for an exact answer from the headers",
                     model.error().message, type);
  }
  if (allow_generic) {
    // Other classes: a text model if the config has one, else a vision encoder.
    if (auto model = arch::BuildGenericDecoder(config, options)) return model;
    if (auto model = arch::BuildGenericVision(config, options)) return model;
  }
  return MakeError("{}: model_type \"{}\" ({}) is not supported by memfit's config-only builders; "
                   "point memfit at the model's .safetensors or .gguf files (or a Hub repo that "
                   "has them) for an exact answer from the headers",
                   config.where(), type, arch);
}

// BuildAny under the config's MLX block (mlx-community releases), which quantizes every
// builder's linears and embeddings (mlx_quantization.h); a config without one leaves an
// enclosing build's in force, and the build that read the block notes it once.
Result<Model> Build(const HfConfig& config, const BuildOptions& options, bool allow_generic) {
  auto mlx = arch::ReadMlxQuantization(config);
  if (!mlx) return mlx.error();
  if (!*mlx || options.ignore_quantization) return BuildAny(config, options, allow_generic);
  arch::MlxQuantizationScope scope(std::make_shared<const arch::MlxQuantization>(std::move(**mlx)));
  auto model = BuildAny(config, options, allow_generic);
  if (model) arch::NoteMlxQuantization(*model);
  return model;
}

}  // namespace

Result<Model> BuildFromConfig(const HfConfig& config, const BuildOptions& options) {
  return KeepRepeatsOnlyInBlocks(Build(config, options, /*allow_generic=*/true));
}

Result<Model> BuildExactFromConfig(const HfConfig& config, const BuildOptions& options) {
  return KeepRepeatsOnlyInBlocks(Build(config, options, /*allow_generic=*/false));
}

}  // namespace memfit
