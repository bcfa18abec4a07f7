// PaliGemma 1 and 2 (model_type "paligemma": PaliGemmaForConditionalGeneration), as transformers
// (models/paligemma/modeling_paligemma.py) stores it and google/paligemma*-*'s index names it:
// vision_tower.vision_model.* (a SiglipVisionModel from vision_config, without the pooling head),
// multi_modal_projector.linear [projection_dim, vision H] with bias (PaliGemmaMultiModalProjector;
// configuration_paligemma.py sets vision_config.projection_dim from the top-level
// "projection_dim", default 2048), language_model.model.* and language_model.lm_head: a gemma
// (PaliGemma 1) or gemma2 (PaliGemma 2) decoder from text_config (model_type default "gemma"),
// lm_head tied by the text config's "tie_word_embeddings" (the gemma classes default to true).
// An absent vision_config or text_config is PaliGemmaConfig's own default (SigLIP so400m at 224 px;
// an 18-layer gemma of hidden 2048), not the sub-config classes' defaults.

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/vlm_families.h"

namespace memfit::arch {

Result<Model> BuildPaliGemma(const HfConfig& c, const BuildOptions& o) {
  nlohmann::json top = c.raw();
  // PaliGemmaConfig.__init__: the sub-configs it builds when none is given.
  if (!top.contains("vision_config") || top["vision_config"].is_null()) {
    top["vision_config"] = {{"intermediate_size", 4096}, {"hidden_size", 1152},
                            {"patch_size", 14},          {"image_size", 224},
                            {"num_hidden_layers", 27},   {"num_attention_heads", 16},
                            {"vision_use_head", false}};
  }
  if (!top.contains("text_config") || top["text_config"].is_null()) {
    top["text_config"] = {{"model_type", "gemma"},        {"hidden_size", 2048},
                          {"num_hidden_layers", 18},      {"intermediate_size", 16384},
                          {"num_attention_heads", 8},     {"num_key_value_heads", 1},
                          {"vocab_size", c.raw().value("vocab_size", nlohmann::json(257152))}};
  }
  MEMFIT_ASSIGN_OR_RETURN(HfConfig full, HfConfig::FromJson(std::move(top), c.where()));
  std::vector<std::string> defaulted;
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text,
                          TextSubConfig(full, "text_config", "gemma", "GemmaForCausalLM", defaulted,
                                        StoredAndLoadedNames("language_model.model", "language_model.lm_head")));
  Result<Model> built = MakeError("{}: text_config.model_type \"{}\": memfit builds PaliGemma with "
                                  "a gemma or gemma2 language model only; reading the safetensors "
                                  "headers gives an exact answer", c.where(), text.model_type());
  BuildOptions text_options = o;
  text_options.head_class.clear();
  if (text.model_type() == "gemma" || text.model_type() == "gemma2") {
    nlohmann::json t = text.raw();
    if (text.model_type() == "gemma2") t["architectures"] = {"Gemma2ForCausalLM"};
    MEMFIT_ASSIGN_OR_RETURN(HfConfig typed, HfConfig::FromJson(std::move(t), text.where()));
    built = text.model_type() == "gemma" ? BuildGemma(typed, text_options)
                                         : BuildGemma2(typed, text_options);
  }
  if (!built) return built.error();
  Model language = std::move(*built);
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, full.Sub("vision_config"));

  ModelBuilder b(c);
  Model& m = b.model();
  if (m.architecture.empty()) m.architecture = "PaliGemmaForConditionalGeneration";
  const uint64_t projection = Get(b, c.UintOr("projection_dim", 2048));
  b.SetComponent("vision_tower");
  const uint64_t vision_hidden = EmitClipVision(b, vision, "vision_tower.vision_model",
                                                /*siglip=*/true);
  if (b.failed()) return b.Finish();
  b.SetComponent("multi_modal_projector");
  b.Linear("multi_modal_projector.linear", vision_hidden, projection, true);
  if (b.failed()) return b.Finish();
  AppendLanguageModel(m, std::move(language), c, std::move(defaulted), "language_model.model",
                      "language_model.lm_head", "language_model");
  // PaliGemmaPreTrainedModel._no_split_modules: ["PaliGemmaMultiModalProjector"] plus the
  // children's (SigLIP embeddings and encoder layers, Gemma/Gemma2 decoder layers).
  m.no_split_patterns = {"vision_tower.vision_model.embeddings",
                         "vision_tower.vision_model.encoder.layers.*", "multi_modal_projector",
                         "language_model.model.layers.*"};
  return b.Finish();
}

}  // namespace memfit::arch
