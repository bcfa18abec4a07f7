// LLaVA. Three layouts share model_type "llava":
// - transformers' LlavaForConditionalGeneration (modeling_llava.py, 4.42): vision_tower (a
//   CLIPVisionModel: vision_tower.vision_model.*), multi_modal_projector.{linear_1 [text, vision],
//   linear_2 [text, text]} (biases), language_model (LlamaForCausalLM: language_model.model.*,
//   language_model.lm_head). Sub-configs take the config classes' defaults (CLIPVisionConfig,
//   LlamaConfig) for absent fields, as transformers does.
// - the original repository's LlavaLlamaForCausalLM (haotian-liu/LLaVA): a Llama with
//   model.mm_projector ("linear" or "mlp<N>x_gelu": Linear layers at indices 0, 2, 4, ...); the
//   vision tower named by "mm_vision_tower" is loaded from its own repository at run time, so it
//   is resident but not stored in this checkpoint.
// - a llava with a Pixtral vision tower (mistral-community/pixtral-12b; vision_config model_type
//   "pixtral"): the kLlavaPixtral row (vlm_families.cc).

#include <algorithm>
#include <iterator>
#include <regex>

#include "formats/hf_config_json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/encoder_common.h"
#include "model/arch/families.h"
#include "model/arch/multimodal_kit.h"
#include "model/hparams/config_keys.h"

namespace memfit::arch {
namespace {

Result<Model> BuildLlavaHf(const HfConfig& c, const BuildOptions& options) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text_sub, c.Sub("text_config"));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig vision, c.Sub("vision_config"));
  if (vision.model_type() == "pixtral") return BuildVlm(c, options, kLlavaPixtral);
  // LlamaConfig's defaults for absent fields, the top level's torch_dtype.
  nlohmann::json text_json = text_sub.raw();
  FillDefaults(text_json, *hparams::ConfigClassDefaults("llama"));
  if (!text_json.contains("torch_dtype") && c.Has("torch_dtype")) {
    text_json["torch_dtype"] = c.raw()["torch_dtype"];
  }
  const std::string text_type = text_json.value("model_type", "llama");
  if (text_type != "llama") {
    return MakeError(
        "{}: text_config.model_type \"{}\": memfit builds LLaVA with a llama language "
        "model only; reading the safetensors headers gives an exact answer",
        c.where(), text_type);
  }
  CarryQuantization(c, text_json,
                    StoredAndLoadedNames("language_model.model", "language_model.lm_head"));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig text,
                          HfConfig::FromJson(text_json, c.where() + ": text_config"));
  MEMFIT_ASSIGN_OR_RETURN(Model language, BuildLlama(text, options));

  ModelBuilder b(c);
  Model& m = b.model();
  if (m.architecture.empty()) m.architecture = "LlavaForConditionalGeneration";
  b.SetComponent("vision_tower");
  const uint64_t vision_hidden = EmitClipVision(b, vision, "vision_tower.vision_model", false);
  b.SetComponent("multi_modal_projector");
  const uint64_t text_hidden = language.hp.hidden_size;
  b.Linear("multi_modal_projector.linear_1", vision_hidden, text_hidden, true);
  b.Linear("multi_modal_projector.linear_2", text_hidden, text_hidden, true);
  if (b.failed()) return b.Finish();
  m.hp = language.hp;
  for (const auto& a : language.assumptions) m.assumptions.push_back("text_config: " + a);
  for (const auto& n : language.notes) m.notes.push_back("text_config: " + n);
  NoteUnquantizedTowers(QuantizationConfigJson(c), "language_model", m);
  for (auto& t : language.tensors) {
    t.name = "language_model." + t.name;
    if (!t.tied_to.empty()) t.tied_to = "language_model." + t.tied_to;
    t.component = "language_model";
    m.tensors.push_back(std::move(t));
  }
  // 4.42: LlavaPreTrainedModel ["LlavaVisionAttention"] plus its children's: CLIPVisionModel
  // ["CLIPEncoderLayer"] and LlamaForCausalLM ["LlamaDecoderLayer"].
  m.no_split_patterns = {"vision_tower.vision_model.encoder.layers.*",
                         "language_model.model.layers.*"};
  return b.Finish();
}

Result<Model> BuildLlavaOriginal(const HfConfig& c, const BuildOptions& options) {
  MEMFIT_ASSIGN_OR_RETURN(Model m, BuildLlama(c, options));
  ModelBuilder b(c, m.config_dtype.value_or(Dtype::kF32));
  const uint64_t mm_hidden = Get(b, c.Uint("mm_hidden_size"));
  const std::string type = Get(b, c.StringOr("mm_projector_type", "linear"));
  const std::string tower = Get(b, c.StringOr("mm_vision_tower", ""));
  if (b.failed()) return b.Finish();
  const uint64_t hidden = m.hp.hidden_size;
  static const std::regex kMlp("mlp(\\d)x_gelu");
  std::smatch match;
  b.SetComponent("multi_modal_projector");
  if (type == "linear") {
    b.Linear("model.mm_projector", mm_hidden, hidden, true);
  } else if (std::regex_match(type, match, kMlp) && match[1].str() != "0") {
    const uint64_t depth = std::stoull(match[1].str());
    b.Linear("model.mm_projector.0", mm_hidden, hidden, true);
    for (uint64_t i = 1; i < depth; ++i)
      b.Linear(Layer("model.mm_projector", 2 * i), hidden, hidden, true);
  } else {
    return MakeError("{}: \"mm_projector_type\" = \"{}\" is not \"linear\" or \"mlp<N>x_gelu\"",
                     c.where(), type);
  }
  // The vision tower is resident but stored in its own repository: a CLIP ViT whose size memfit
  // reads from the name (openai/clip-vit-large-patch14[-336]).
  static const std::regex kClip(".*clip-vit-(base|large)-patch(\\d+)(-(\\d+))?");
  if (std::regex_match(tower, match, kClip)) {
    const bool large = match[1] == "large";
    nlohmann::json vision = {
        {"hidden_size", large ? 1024 : 768},
        {"intermediate_size", large ? 4096 : 3072},
        {"num_hidden_layers", large ? 24 : 12},
        {"num_attention_heads", large ? 16 : 12},
        {"patch_size", std::stoull(match[2].str().substr(0, 4))},
        {"image_size", match[4].matched ? std::stoull(match[4].str().substr(0, 4)) : 224}};
    MEMFIT_ASSIGN_OR_RETURN(HfConfig vc,
                            HfConfig::FromJson(vision, c.where() + ": mm_vision_tower"));
    b.SetComponent("vision_tower");
    size_t first = b.model().tensors.size();
    EmitClipVision(b, vc, "model.vision_tower.vision_tower.vision_model", false);
    for (size_t i = first; i < b.model().tensors.size(); ++i) b.model().tensors[i].stored = false;
    m.assumptions.push_back(fmt::format(
        "vision tower \"{}\" (not in this checkpoint): CLIP ViT-{} dimensions taken from its name",
        tower, large ? "L" : "B"));
  } else if (!tower.empty()) {
    m.notes.push_back(
        fmt::format("vision tower \"{}\" is loaded from its own repository and is "
                    "not counted",
                    tower));
  }
  MEMFIT_ASSIGN_OR_RETURN(Model extra, b.Finish());
  for (auto& t : m.tensors) {
    if (t.component.empty()) t.component = "language_model";
  }
  // The projector and tower after the language model's tensors, before its head.
  const auto head = std::find_if(m.tensors.rbegin(), m.tensors.rend(), [](const Tensor& t) {
                      return !t.in_head;
                    }).base();
  m.tensors.insert(head, std::make_move_iterator(extra.tensors.begin()),
                   std::make_move_iterator(extra.tensors.end()));
  return m;
}

}  // namespace

Result<Model> BuildLlava(const HfConfig& c, const BuildOptions& o) {
  auto archs = c.architectures();
  if (!archs.empty() && archs.front() == "LlavaLlamaForCausalLM") return BuildLlavaOriginal(c, o);
  return BuildLlavaHf(c, o);
}

}  // namespace memfit::arch
