// Idefics3 (model_type "idefics3": Idefics3ForConditionalGeneration; SmolVLM, granite-docling).
// transformers models/idefics3/modeling_idefics3.py: model.vision_model is the
// kIdefics3VisionTower row (vision_tower.cc); model.connector.modality_projection.proj [text H,
// vision H x scale_factor^2] without bias (Idefics3SimpleMLP after the pixel shuffle);
// model.text_model is AutoModel of text_config (a llama: the llama spec row's tensors under
// model.text_model); lm_head [vocab, text H], tied to the text embeddings when the
// top-level "tie_word_embeddings" is set (Idefics3ForConditionalGeneration.tie_weights).

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/vision_tower.h"

namespace memfit::arch {

Result<Model> BuildIdefics3(const HfConfig& c, const BuildOptions& o) {
  auto text_sub = c.Sub("text_config");
  if (!text_sub) return text_sub.error();
  auto vision = c.Sub("vision_config");
  if (!vision) return vision.error();
  nlohmann::json text_json = text_sub->raw();
  const std::string text_type = text_json.value("model_type", "llama");
  if (text_type != "llama") {
    return MakeError(
        "{}: text_config.model_type \"{}\": memfit builds Idefics3 with a llama "
        "language model only; reading the safetensors headers gives an exact answer",
        c.where(), text_type);
  }
  // The text model inherits the top level's dtype and tie (tie_weights reads the top config).
  for (const char* key : {"torch_dtype", "dtype"}) {
    if (!text_json.contains(key) && c.Has(key)) text_json[key] = c.raw()[key];
  }
  if (c.Has("tie_word_embeddings"))
    text_json["tie_word_embeddings"] = c.raw()["tie_word_embeddings"];
  text_json["architectures"] = {"LlamaForCausalLM"};
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text,
                          HfConfig::FromJson(text_json, c.where() + ": text_config"));
  BuildOptions text_options = o;
  text_options.head_class.clear();
  MEMFIT_ASSIGN_OR_RETURN(Model language, BuildLlama(text, text_options));

  ModelBuilder b(c);
  Model& m = b.model();
  const uint64_t scale = Get(b, c.UintOr("scale_factor", 2));
  if (!b.failed() && (scale == 0 || scale > 64)) {
    return MakeError("{}: \"scale_factor\" = {} must be in 1..64", c.where(), scale);
  }
  b.SetComponent("vision_model");
  const uint64_t vision_hidden =
      EmitVisionTower(b, *vision, kIdefics3VisionTower, "model.vision_model").hidden;
  if (b.failed()) return b.Finish();
  b.SetComponent("connector");
  b.Linear("model.connector.modality_projection.proj",
           MulDims(b, vision_hidden, scale * scale, "vision hidden_size x scale_factor^2"),
           language.hp.hidden_size, false);
  if (b.failed()) return b.Finish();
  const auto rename = [](std::string& name) {
    if (name.starts_with("model.")) name = "model.text_model." + name.substr(6);
  };
  std::vector<Tensor> head;
  for (auto& t : language.tensors) {
    rename(t.name);
    if (!t.tied_to.empty()) rename(t.tied_to);
    if (t.component.empty()) t.component = "text_model";
    (t.in_head ? head : m.tensors).push_back(std::move(t));
  }
  for (auto& t : head) m.tensors.push_back(std::move(t));
  m.hp = language.hp;
  m.hp.text_config_key = "text_config";
  for (const auto& a : language.assumptions) m.assumptions.push_back("text_config: " + a);
  for (const auto& n : language.notes) m.notes.push_back("text_config: " + n);
  m.no_split_patterns = {"model.vision_model.encoder.layers.*.self_attn",
                         "model.text_model.layers.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

}  // namespace memfit::arch
