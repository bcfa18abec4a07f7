// Qwen vision towers (rows of vision_tower.cc) and the Qwen vision-language assembly
// (qwen_vision.h).

#include "model/arch/qwen_vision.h"
#include "formats/hf_config_json.h"

#include "model/arch/multimodal_kit.h"
#include "model/arch/qwen_hybrid.h"
#include "model/arch/vision_tower.h"

namespace memfit::arch {

void EmitQwenVision(ModelBuilder& b, const HfConfig& v, QwenVision kind, const std::string& p,
                    uint64_t text_hidden, const Quantization* q) {
  static const VisionTowerSpec* const kRows[] = {&kQwen2VlTower, &kQwen25VlTower, &kQwen3VlTower,
                                                 &kQwen25OmniTower, &kQwen3OmniTower};
  EmitVisionTower(b, v, *kRows[static_cast<size_t>(kind)], p, text_hidden, q);
}

Result<Model> BuildQwenVl(const HfConfig& c, const BuildOptions& o, const QwenVlSpec& spec) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text_config, QwenTextConfig(c));
  nlohmann::json text_json = text_config.raw();
  text_json["architectures"] = {spec.text_class};
  text_json.erase("vision_config");
  // The quantization_config names the language model's modules as the checkpoint stores them
  // (spec.text_prefix, lm_head at the top).
  CarryQuantization(c, text_json, {.model_prefixes = {spec.text_prefix + "."},
                                   .head_names = {"lm_head"}});
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text, HfConfig::FromJson(std::move(text_json),
                                                            text_config.where()));
  BuildOptions text_options = o;
  text_options.head_class.clear();
  MEMFIT_ASSIGN_OR_RETURN(Model language, spec.text_builder(text, text_options));
  auto vision = c.Sub("vision_config");
  if (!vision) return vision.error();

  ModelBuilder b(c, text.torch_dtype().value_or(Dtype::kF32));
  Model& m = b.model();
  const std::string text_prefix = spec.text_prefix + ".";
  auto rename = [&](std::string& name) {
    if (name.starts_with("model.")) name = text_prefix + name.substr(6);
  };
  for (auto& t : language.tensors) {
    rename(t.name);
    if (!t.tied_to.empty()) rename(t.tied_to);
    t.component = "language_model";
    m.tensors.push_back(std::move(t));
  }
  m.hp = std::move(language.hp);
  if (c.Has("text_config")) m.hp.text_config_key = "text_config";
  m.assumptions = std::move(language.assumptions);
  m.notes = std::move(language.notes);
  // The vision tower under the same quantization_config (the top level's, or text_config's where
  // QwenTextConfig found it), its modules named as stored.
  const Quantization q = ReadQuantization(b, text_config, o);
  b.SetComponent("vision_tower");
  EmitQwenVision(b, *vision, spec.vision, spec.vision_prefix, m.hp.hidden_size, &q);
  // _no_split_modules: the text decoder layer and the vision block.
  m.no_split_patterns = {text_prefix + "layers.*", spec.vision_prefix + ".blocks.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
