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
// Any other text_config.model_type (Mistral-Small-4-119B-2603: "mistral4", issue 30) is built by
// that type's registered builder, in the layout transformers 5's converter writes
// (models/mistral4/convert_mistral4_weight_to_hf.py): model.vision_tower.*,
// model.multi_modal_projector.*, model.language_model.* and lm_head.

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"
#include "model/arch/builder_kit.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/vlm_families.h"

namespace memfit::arch {
namespace {

// Where the parts of a Mistral 3 checkpoint live: transformers 4.50's stored names for a
// mistral or llama text model, transformers 5's for any other.
struct Mistral3Names {
  std::string vision, projector, language, head;
};

// text_config.model_type without parsing the sub-config: "mistral" when absent.
std::string TextModelType(const HfConfig& c) {
  const auto it = c.raw().find("text_config");
  if (it == c.raw().end() || !it->is_object()) return "mistral";
  const auto type = it->find("model_type");
  return type != it->end() && type->is_string() ? type->get<std::string>() : "mistral";
}

// The text model: mistral or llama as before, else the builder registered for its model_type.
Result<Model> BuildMistral3Text(const HfConfig& c, const HfConfig& text, const BuildOptions& o) {
  BuildOptions text_options = o;
  text_options.head_class.clear();
  if (text.model_type() == "mistral") return BuildMistral(text, text_options);
  if (text.model_type() == "llama") return BuildLlama(text, text_options);
  const ArchitectureBuilder* builder = FindArchitectureBuilder(text.model_type(), "");
  if (builder == nullptr || builder->build == BuildMistral3) {
    return MakeError("{}: text_config.model_type \"{}\" has no builder in memfit; reading the "
                     "safetensors headers gives an exact answer", c.where(), text.model_type());
  }
  return builder->build(text, text_options);
}

}  // namespace

Result<Model> BuildMistral3(const HfConfig& c, const BuildOptions& o) {
  const std::string text_type = TextModelType(c);
  const bool legacy = text_type == "mistral" || text_type == "llama";
  const Mistral3Names n =
      legacy ? Mistral3Names{"vision_tower", "multi_modal_projector", "language_model.model",
                             "language_model.lm_head"}
             : Mistral3Names{"model.vision_tower", "model.multi_modal_projector",
                             "model.language_model", "lm_head"};
  std::vector<std::string> defaulted;
  MEMFIT_ASSIGN_OR_RETURN(
      HfConfig text,
      TextSubConfig(c, "text_config", "mistral",
                    text_type == "mistral4" ? "Mistral4ForCausalLM" : "MistralForCausalLM",
                    defaulted, StoredAndLoadedNames(n.language, n.head)));
  MEMFIT_ASSIGN_OR_RETURN(Model language, BuildMistral3Text(c, text, o));
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
  const uint64_t vh = EmitPixtralVision(b, vision, n.vision);
  if (b.failed()) return b.Finish();
  const uint64_t th = language.hp.hidden_size;
  const std::string& p = n.projector;
  b.SetComponent("multi_modal_projector");
  b.RmsNorm(p + ".norm", vh);
  b.Linear(p + ".patch_merger.merging_layer",
           MulDims(b, vh, merge * merge, "vision hidden_size x spatial_merge_size^2"), vh, false);
  b.Linear(p + ".linear_1",
           MulDims(b, vh, feature_layers, "vision hidden_size x feature layers"), th, bias);
  b.Linear(p + ".linear_2", th, th, bias);
  if (b.failed()) return b.Finish();
  AppendLanguageModel(m, std::move(language), c, std::move(defaulted), n.language, n.head,
                      "language_model");
  // _no_split_modules of the children: PixtralAttentionLayer, MistralDecoderLayer (the text
  // builder's decoder layer for another text model).
  m.no_split_patterns = {n.vision + ".transformer.layers.*", n.language + ".layers.*"};
  return b.Finish();
}

}  // namespace memfit::arch
