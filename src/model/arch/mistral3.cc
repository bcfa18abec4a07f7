// Mistral 3 vision-language (model_type "mistral3": Mistral3ForConditionalGeneration, e.g.
// Mistral-Small-3.1-24B-Instruct-2503), as transformers 4.50 (models/mistral3/
// modeling_mistral3.py) stores it: vision_tower.* (the Pixtral encoder, pixtral.cc),
// multi_modal_projector.{norm (RMSNorm over vision H), patch_merger.merging_layer
// [vision H, vision H x spatial_merge_size^2] without bias, linear_1 [text H, vision H x the number
// of "vision_feature_layer"s], linear_2 [text H, text H]} (biases with
// "multimodal_projector_bias"), language_model.model.* and language_model.lm_head (the mistral
// decoder of text_config, a DecoderSpec row; MistralConfig leaves the head untied). transformers >= 4.52
// loads the same files as model.language_model.* and lm_head. Absent text_config fields take
// MistralConfig's defaults, vision_config's PixtralVisionConfig's.

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/vlm_families.h"

namespace memfit::arch {

Result<Model> BuildMistral3(const HfConfig& c, const BuildOptions& o) {
  std::vector<std::string> defaulted;
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, TextSubConfig(c, "text_config", "mistral",
                                                       "MistralForCausalLM", defaulted,
                                                       StoredAndLoadedNames("language_model.model", "language_model.lm_head")));
  if (text.model_type() != "mistral" && text.model_type() != "llama") {
    return MakeError("{}: text_config.model_type \"{}\": memfit builds Mistral 3 with a mistral "
                     "or llama language model only; reading the safetensors headers gives an "
                     "exact answer", c.where(), text.model_type());
  }
  BuildOptions text_options = o;
  text_options.head_class.clear();
  MEMFIT_ASSIGN_OR_RETURN(Model language, text.model_type() == "mistral"
                                              ? BuildMistral(text, text_options)
                                              : BuildLlama(text, text_options));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, SubOrEmpty(c, "vision_config"));

  ModelBuilder b(c);
  Model& m = b.model();
  if (m.architecture.empty()) m.architecture = "Mistral3ForConditionalGeneration";
  const uint64_t merge = Get(b, c.UintOr("spatial_merge_size", 2));
  const bool bias = Get(b, c.BoolOr("multimodal_projector_bias", false));
  uint64_t feature_layers = 1;
  if (c.Has("vision_feature_layer") && c.raw()["vision_feature_layer"].is_array()) {
    feature_layers = c.raw()["vision_feature_layer"].size();
  }
  if (!b.failed() && (merge == 0 || merge > 64)) {
    return MakeError("{}: \"spatial_merge_size\" = {} must be in 1..64", c.where(), merge);
  }
  b.SetComponent("vision_tower");
  const uint64_t vh = EmitPixtralVision(b, vision, "vision_tower");
  if (b.failed()) return b.Finish();
  const uint64_t th = language.hp.hidden_size;
  b.SetComponent("multi_modal_projector");
  b.RmsNorm("multi_modal_projector.norm", vh);
  b.Linear("multi_modal_projector.patch_merger.merging_layer",
           MulDims(b, vh, merge * merge, "vision hidden_size x spatial_merge_size^2"), vh, false);
  b.Linear("multi_modal_projector.linear_1",
           MulDims(b, vh, feature_layers, "vision hidden_size x feature layers"), th, bias);
  b.Linear("multi_modal_projector.linear_2", th, th, bias);
  if (b.failed()) return b.Finish();
  AppendLanguageModel(m, std::move(language), c, std::move(defaulted), "language_model.model",
                      "language_model.lm_head", "language_model");
  // _no_split_modules of the children: PixtralAttentionLayer, MistralDecoderLayer.
  m.no_split_patterns = {"vision_tower.transformer.layers.*", "language_model.model.layers.*"};
  return b.Finish();
}

}  // namespace memfit::arch
