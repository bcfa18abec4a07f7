// Qwen vision towers (rows of vision_tower.cc) and the Qwen vision-language assembly
// (qwen_vision.h), with its Qwen2-VL and Qwen2.5-VL builders:
//
// Qwen2-VL and Qwen2.5-VL (qwen2_vl, qwen2_5_vl: Qwen2[_5]VLForConditionalGeneration): a Qwen2
// text model (q/k/v biases) and the Qwen2-VL / Qwen2.5-VL vision tower (qwen_vision.h). Two
// checkpoint layouts: configs with the text keys at the top level (transformers < 4.52, e.g.
// Qwen/Qwen2-VL-7B-Instruct, allenai/olmOCR-7B-0225-preview) store model.layers.* and visual.*;
// configs with a "text_config" (saved by transformers >= 4.52) store model.language_model.* and
// model.visual.*. lm_head at the top in both. Checked byte-exact against olmOCR-7B's index.
// Sources: transformers/models/qwen2_vl/modeling_qwen2_vl.py, qwen2_5_vl/modeling_qwen2_5_vl.py
// (and their checkpoint-conversion key mapping for the two layouts).

#include "model/arch/qwen_vision.h"
#include "formats/hf_config_json.h"

#include "model/arch/families.h"
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

namespace {

Result<Model> BuildQwen2VlFamily(const HfConfig& c, const BuildOptions& o, QwenVision vision) {
  const bool nested = c.Has("text_config");
  return BuildQwenVl(c, o, {.text_builder = BuildQwen2, .text_class = "Qwen2ForCausalLM",
                            .text_prefix = nested ? "model.language_model" : "model",
                            .vision = vision,
                            .vision_prefix = nested ? "model.visual" : "visual"});
}

}  // namespace

Result<Model> BuildQwen2Vl(const HfConfig& c, const BuildOptions& o) {
  return BuildQwen2VlFamily(c, o, QwenVision::kQwen2Vl);
}
Result<Model> BuildQwen25Vl(const HfConfig& c, const BuildOptions& o) {
  return BuildQwen2VlFamily(c, o, QwenVision::kQwen25Vl);
}

}  // namespace memfit::arch
