// LLaVA-NeXT family, as transformers stores it (the 4.42 names in llava-hf checkpoints' indexes):
// - llava_next (LlavaNextForConditionalGeneration, models/llava_next/modeling_llava_next.py):
//   vision_tower.vision_model.* (CLIPVisionModel, or SiglipVisionModel when vision_config's
//   model_type says so), multi_modal_projector.{linear_1 [text H, vision H x the number of
//   "vision_feature_layer"s], linear_2 [text H, text H]} (biases unless
//   "multimodal_projector_bias" is false), image_newline [text H] (an nn.Parameter),
//   language_model.model.* and language_model.lm_head (the text_config decoder: llama, mistral,
//   qwen2, ... built by its registered builder).
// - llava_next_video (modeling_llava_next_video.py): the same plus vision_resampler
//   (LlavaNextVideoPooler): AvgPool2d/MaxPool2d have no parameters; "spatial_pool_mode" "conv" is
//   a Conv2d(vision H, "spatial_pool_out_channels" (default vision H), spatial_pool_stride) with
//   bias.
// - llava_onevision (modeling_llava_onevision.py): the same layout as llava_next with a SigLIP
//   tower (vision_config model_type default "siglip_vision_model") and a qwen2 text model.
// An absent vision_config is the config class's own default (llava_next, llava_next_video: CLIP
// ViT-L/14 at 336 px); llava_onevision requires one. text_config fields absent take the text
// config class's defaults (LlavaNextConfig's text default is LlamaConfig, onevision's Qwen2Config).

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/vlm_families.h"

namespace memfit::arch {
namespace {

enum class Kind : uint8_t { kNext, kNextVideo, kOnevision };

// The causal-LM class of each text model type these checkpoints use.
std::string LlavaNextCausalLmClass(std::string_view type) {
  static const std::pair<std::string_view, std::string_view> kClasses[] = {
      {"llama", "LlamaForCausalLM"}, {"mistral", "MistralForCausalLM"},
      {"qwen2", "Qwen2ForCausalLM"}, {"qwen3", "Qwen3ForCausalLM"},
      {"gemma", "GemmaForCausalLM"}, {"mixtral", "MixtralForCausalLM"}};
  for (const auto& [t, cls] : kClasses) {
    if (t == type) return std::string(cls);
  }
  return "";
}

Result<Model> BuildLlavaNextLike(const HfConfig& c, const BuildOptions& o, Kind kind) {
  const std::string text_default = kind == Kind::kOnevision ? "qwen2" : "llama";
  std::string text_type = text_default;
  if (c.Has("text_config")) {
    MEMFIT_ASSIGN_OR_RETURN(HfConfig sub, c.Sub("text_config"));
    if (sub.Has("model_type")) text_type = sub.model_type();
  }
  const std::string cls = LlavaNextCausalLmClass(text_type);
  if (cls.empty()) {
    return MakeError("{}: text_config.model_type \"{}\": memfit builds {} with a llama, mistral, "
                     "qwen2, qwen3, gemma or mixtral language model only; reading the safetensors "
                     "headers gives an exact answer", c.where(), text_type, c.model_type());
  }
  std::vector<std::string> defaulted;
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text,
                          TextSubConfig(c, "text_config", text_default, cls, defaulted,
                                        StoredAndLoadedNames("language_model.model", "language_model.lm_head")));
  const ArchitectureBuilder* builder = FindArchitectureBuilder(text.model_type(), cls);
  if (builder == nullptr) return MakeError("{}: no builder for \"{}\"", text.where(), cls);
  BuildOptions text_options = o;
  text_options.head_class.clear();
  MEMFIT_ASSIGN_OR_RETURN(Model language, builder->build(text, text_options));

  nlohmann::json vision_json;
  if (c.Has("vision_config") && !c.raw()["vision_config"].is_null()) {
    MEMFIT_ASSIGN_OR_RETURN(HfConfig sub, c.Sub("vision_config"));
    vision_json = sub.raw();
  } else if (kind == Kind::kOnevision) {
    return MakeError("{}: missing required field \"vision_config\"", c.where());
  } else {
    // LlavaNextConfig / LlavaNextVideoConfig: CLIP ViT-L/14 at 336 px.
    vision_json = {{"model_type", "clip_vision_model"}, {"intermediate_size", 4096},
                   {"hidden_size", 1024}, {"patch_size", 14}, {"image_size", 336},
                   {"num_hidden_layers", 24}, {"num_attention_heads", 16}};
  }
  const std::string vision_type = vision_json.value(
      "model_type", kind == Kind::kOnevision ? "siglip_vision_model" : "clip_vision_model");
  if (vision_type != "clip_vision_model" && vision_type != "siglip_vision_model") {
    return MakeError("{}: vision_config.model_type \"{}\" is not \"clip_vision_model\" or "
                     "\"siglip_vision_model\"", c.where(), vision_type);
  }
  const bool siglip = vision_type == "siglip_vision_model";
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision,
                          HfConfig::FromJson(std::move(vision_json), c.where() + ": vision_config"));

  ModelBuilder b(c);
  Model& m = b.model();
  const bool bias = Get(b, c.BoolOr("multimodal_projector_bias", true));
  uint64_t feature_layers = 1;
  if (c.Has("vision_feature_layer") && c.raw()["vision_feature_layer"].is_array()) {
    feature_layers = c.raw()["vision_feature_layer"].size();
  }
  const std::string pool = kind == Kind::kNextVideo
                               ? Get(b, c.StringOr("spatial_pool_mode", "average"))
                               : "average";
  const uint64_t stride = Get(b, c.UintOr("spatial_pool_stride", 2));
  if (b.failed()) return b.Finish();
  if (pool != "average" && pool != "max" && pool != "conv") {
    return MakeError("{}: \"spatial_pool_mode\" = \"{}\" is not \"average\", \"max\" or \"conv\"",
                     c.where(), pool);
  }
  b.SetComponent("vision_tower");
  const uint64_t vh = EmitClipVision(b, vision, "vision_tower.vision_model", siglip);
  if (b.failed()) return b.Finish();
  const uint64_t th = language.hp.hidden_size;
  if (pool == "conv") {
    if (stride == 0 || stride > 64) {
      return MakeError("{}: \"spatial_pool_stride\" = {} must be in 1..64", c.where(), stride);
    }
    const uint64_t out = Get(b, c.UintOr("spatial_pool_out_channels", vh));
    b.SetComponent("vision_resampler");
    b.Conv("vision_resampler.pool", vh, out, {stride, stride}, true);
  }
  b.SetComponent("multi_modal_projector");
  b.Linear("multi_modal_projector.linear_1",
           MulDims(b, vh, feature_layers, "vision hidden_size x feature layers"), th, bias);
  b.Linear("multi_modal_projector.linear_2", th, th, bias);
  b.SetComponent("");
  b.Param("image_newline", {th});
  if (b.failed()) return b.Finish();
  AppendLanguageModel(m, std::move(language), c, std::move(defaulted), "language_model.model",
                      "language_model.lm_head", "language_model");
  m.no_split_patterns = {"vision_tower.vision_model.encoder.layers.*",
                         "language_model.model.layers.*"};
  return b.Finish();
}

}  // namespace

Result<Model> BuildLlavaNext(const HfConfig& c, const BuildOptions& o) {
  return BuildLlavaNextLike(c, o, Kind::kNext);
}
Result<Model> BuildLlavaNextVideo(const HfConfig& c, const BuildOptions& o) {
  return BuildLlavaNextLike(c, o, Kind::kNextVideo);
}
Result<Model> BuildLlavaOnevision(const HfConfig& c, const BuildOptions& o) {
  return BuildLlavaNextLike(c, o, Kind::kOnevision);
}

}  // namespace memfit::arch
