// The Qwen vision-language composites (qwen_vision.h): a Qwen2 / Qwen3 / Qwen3-MoE text model and a
// Qwen vision tower (a row of vision_tower.cc), lm_head at the top.
// - qwen2_vl, qwen2_5_vl (Qwen2[_5]VLForConditionalGeneration; transformers models/qwen2_vl/
//   modeling_qwen2_vl.py, qwen2_5_vl/modeling_qwen2_5_vl.py and their checkpoint-conversion key
//   mapping): configs with the text keys at the top level (transformers < 4.52: Qwen2-VL-7B-
//   Instruct, olmOCR-7B-0225-preview, checked byte-exact against its index) store model.layers.*
//   and visual.*; configs with a "text_config" (>= 4.52) model.language_model.* and model.visual.*.
// - qwen3_vl, qwen3_vl_moe (Qwen3VL[Moe]ForConditionalGeneration; qwen3_vl/modeling_qwen3_vl.py,
//   qwen3_vl_moe/modeling_qwen3_vl_moe.py): model.language_model.* (the MoE variant's experts
//   fused as mlp.experts.gate_up_proj [E, H, 2I] and down_proj [E, I, H]), the tower with
//   deepstack mergers under model.visual; checked byte-exact against nvidia/Cosmos-Reason2-8B's
//   shard sizes (ground truth test).

#include "model/arch/qwen_vision.h"

#include <algorithm>

#include "formats/hf_config_json.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/arch/qwen_hybrid.h"
#include "model/arch/table_row.h"
#include "model/arch/vision_tower.h"

namespace memfit::arch {

void EmitQwenVision(ModelBuilder& b, const HfConfig& v, QwenVision kind, const std::string& p,
                    uint64_t text_hidden, const Quantization* q) {
  static const VisionTowerSpec* const kRows[] = {&kQwen2VlTower, &kQwen25VlTower, &kQwen3VlTower,
                                                 &kQwen25OmniTower, &kQwen3OmniTower};
  EmitVisionTower(b, v, *kRows[static_cast<size_t>(kind)], p, text_hidden, q);
}

namespace {

struct QwenVlSpec {
  ArchitectureBuilderFn text_builder = nullptr;
  const char* text_class = "";  // the causal-LM class the text builder builds
  QwenVision vision = QwenVision::kQwen3Vl;
  bool top_level_layout = false;  // without "text_config": model.layers.* and visual.*
};

// The text model built by spec.text_builder from "text_config" (or from the top level for configs
// without one), its "model." tensors renamed to the text prefix (lm_head kept), then the vision
// tower. Components "language_model" and "vision_tower"; hp from the text model.
Result<Model> BuildQwenVl(const HfConfig& c, const BuildOptions& o, const QwenVlSpec& spec) {
  const bool nested = c.Has("text_config") || !spec.top_level_layout;
  const std::string text_prefix = nested ? "model.language_model." : "model.";
  const std::string vision_prefix = nested ? "model.visual" : "visual";
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text_config, QwenTextConfig(c));
  nlohmann::json text_json = text_config.raw();
  text_json["architectures"] = {spec.text_class};
  text_json.erase("vision_config");
  // The quantization_config names the language model's modules as the checkpoint stores them.
  CarryQuantization(c, text_json, {.model_prefixes = {text_prefix}, .head_names = {"lm_head"}});
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text,
                          HfConfig::FromJson(std::move(text_json), text_config.where()));
  BuildOptions text_options = o;
  text_options.head_class.clear();
  MEMFIT_ASSIGN_OR_RETURN(Model language, spec.text_builder(text, text_options));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, c.Sub("vision_config"));

  ModelBuilder b(c, text.torch_dtype().value_or(Dtype::kF32));
  Model& m = b.model();
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
  // The tower under the same quantization_config (the top level's, or text_config's where
  // QwenTextConfig found it), its modules named as stored.
  const Quantization q = ReadQuantization(b, text_config, o);
  b.SetComponent("vision_tower");
  EmitQwenVision(b, vision, spec.vision, vision_prefix, m.hp.hidden_size, &q);
  // _no_split_modules: the text decoder layer and the vision block.
  m.no_split_patterns = {text_prefix + "layers.*", vision_prefix + ".blocks.*"};
  m.base_model_prefix = "model.";
  return b.Finish();
}

// BuildQwen3Moe's per-expert tensors, fused as the Qwen3-VL-MoE checkpoints store them.
Result<Model> BuildQwen3VlMoeText(const HfConfig& c, const BuildOptions& o) {
  MEMFIT_ASSIGN_OR_RETURN(Model m, BuildQwen3Moe(c, o));
  const auto& hp = m.hp;
  // Quantized experts (scales beside the weights, or packed weights) stay one module per expert:
  // transformers' quantizers replace nn.Linear modules, and Qwen's FP8 MoE releases store
  // experts.E.{gate,up,down}_proj with their scales (printed as an assumption).
  const bool quantized = std::any_of(m.tensors.begin(), m.tensors.end(), [](const Tensor& t) {
    return t.name.find(".mlp.experts.") != std::string::npos &&
           (!t.name.ends_with("_proj.weight") || t.logical_params.has_value() ||
            t.dtype == Dtype::kF8E4M3);
  });
  if (quantized) {
    m.assumptions.push_back(
        "quantized experts are counted one module per expert "
        "(mlp.experts.E.{gate,up,down}_proj with their scales), the layout of Qwen's FP8 "
        "releases, not the fused gate_up_proj/down_proj of the bf16 checkpoints");
    return m;
  }
  std::vector<Tensor> out;
  out.reserve(m.tensors.size());
  for (auto& t : m.tensors) {
    const size_t at = t.name.find(".mlp.experts.");
    if (at == std::string::npos) {
      out.push_back(std::move(t));
      continue;
    }
    if (!t.name.ends_with(".experts.0.gate_proj.weight")) continue;
    const std::string l = t.name.substr(0, at) + ".mlp.experts.";
    const std::pair<const char*, std::vector<uint64_t>> fused[] = {
        {"gate_up_proj", {hp.num_experts, hp.hidden_size, 2 * hp.moe_intermediate_size}},
        {"down_proj", {hp.num_experts, hp.moe_intermediate_size, hp.hidden_size}}};
    for (const auto& [name, shape] : fused) {
      Tensor f = t;  // copy 0 of a compact run, or the expert 0 of every expert
      f.copies = 1;
      f.repeat_span = 0;
      f.repeat_index_from_end = 0;
      f.name = l + name;
      f.shape = shape;
      f.numel = shape[0] * shape[1] * shape[2];  // E x (a checked expert tensor's size)
      f.bytes = TensorBytes(f.numel, f.dtype).value_or(0);
      out.push_back(std::move(f));
    }
  }
  m.tensors = std::move(out);
  return m;
}

constexpr QwenVlSpec kQwen2Vl = {BuildQwen2, "Qwen2ForCausalLM", QwenVision::kQwen2Vl, true};
constexpr QwenVlSpec kQwen25Vl = {BuildQwen2, "Qwen2ForCausalLM", QwenVision::kQwen25Vl, true};
constexpr QwenVlSpec kQwen3Vl = {BuildQwen3, "Qwen3ForCausalLM"};
constexpr QwenVlSpec kQwen3VlMoe = {BuildQwen3VlMoeText, "Qwen3MoeForCausalLM"};

}  // namespace

const std::vector<ArchitectureBuilder>& QwenVlFamilyBuilders() {
  static const std::vector<ArchitectureBuilder> kRows = {
      {"qwen3_vl", "", BuildRow<BuildQwenVl, kQwen3Vl>, "qwen3_vl"},
      {"qwen3_vl_moe", "", BuildRow<BuildQwenVl, kQwen3VlMoe>, "qwen3_vl"},
      {"qwen2_vl", "", BuildRow<BuildQwenVl, kQwen2Vl>, "qwen2_vl"},
      {"qwen2_5_vl", "", BuildRow<BuildQwenVl, kQwen25Vl>, "qwen2_vl"},
  };
  return kRows;
}

}  // namespace memfit::arch
