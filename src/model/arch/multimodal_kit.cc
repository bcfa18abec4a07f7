#include "model/arch/multimodal_kit.h"

#include <fmt/format.h>

#include <algorithm>

#include "formats/hf_config_json.h"
#include "formats/json.h"
#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"
#include "model/arch/vision_tower.h"
#include "model/hparams/config_keys.h"

namespace memfit::arch {

namespace {

Result<HfConfig> TextSub(const HfConfig& top, std::string_view key, std::string_view default_type,
                         std::string_view causal_lm_class, std::vector<std::string>& assumptions,
                         const LanguageModelNames* names, bool class_defaults = true) {
  nlohmann::json text = nlohmann::json::object();
  if (top.Has(key)) {
    MEMFIT_ASSIGN_OR_RETURN(HfConfig sub, top.Sub(key));
    text = sub.raw();
  }
  if (!text.contains("model_type")) text["model_type"] = default_type;
  if (!text.contains("tie_word_embeddings") && top.Has("tie_word_embeddings")) {
    text["tie_word_embeddings"] = top.raw()["tie_word_embeddings"];
  }
  if (class_defaults && text["model_type"].is_string()) {
    if (const auto* defaults =
            hparams::ConfigClassDefaults(text["model_type"].get<std::string>())) {
      // An explicit null (sliding_window) stays.
      const std::string list = FillDefaults(text, *defaults);
      if (!list.empty()) {
        assumptions.push_back(fmt::format(
            "{}: fields absent, the \"{}\" config class's defaults are used (as transformers "
            "does): {}",
            key, text["model_type"].get<std::string>(), list));
      }
    }
  }
  if (!text.contains("torch_dtype") && !text.contains("dtype")) {
    for (const char* dtype_key : {"torch_dtype", "dtype"}) {
      if (top.Has(dtype_key)) text[dtype_key] = top.raw()[dtype_key];
    }
  }
  text["architectures"] = {causal_lm_class};
  if (names != nullptr) CarryQuantization(top, text, *names);
  return HfConfig::FromJson(std::move(text), top.where() + ": " + std::string(key));
}

}  // namespace

Result<HfConfig> TextSubConfig(const HfConfig& top, std::string_view key,
                               std::string_view default_type, std::string_view causal_lm_class,
                               std::vector<std::string>& assumptions) {
  return TextSub(top, key, default_type, causal_lm_class, assumptions, nullptr);
}

Result<HfConfig> TextSubConfig(const HfConfig& top, std::string_view key,
                               std::string_view default_type, std::string_view causal_lm_class,
                               std::vector<std::string>& assumptions,
                               const LanguageModelNames& names) {
  return TextSub(top, key, default_type, causal_lm_class, assumptions, &names);
}

LanguageModelNames StoredAndLoadedNames(const std::string& model_prefix,
                                        const std::string& head_name) {
  return {.model_prefixes = {model_prefix + ".", "model.language_model."},
          .head_names = {head_name, "lm_head"}};
}

void CarryQuantization(const HfConfig& top, nlohmann::json& text, const LanguageModelNames& names) {
  nlohmann::json q;
  if (auto it = text.find("quantization_config"); it != text.end() && it->is_object()) {
    q = *it;
  } else if (const auto* top_q = QuantizationConfigJson(top)) {
    q = *top_q;
  } else {
    return;
  }
  nlohmann::json aliases = nlohmann::json::array();
  for (const auto& prefix : names.model_prefixes) aliases.push_back({"model.", prefix});
  for (const auto& head : names.head_names) aliases.push_back({"lm_head", head});
  q[kModuleAliasesKey] = std::move(aliases);
  text["quantization_config"] = std::move(q);
}

void NoteUnquantizedTowers(const nlohmann::json* quantization,
                           const std::string& language_component, Model& model) {
  if (!quantization) return;
  auto config = HfConfig::FromJson(nlohmann::json{{"quantization_config", *quantization}},
                                   "quantization_config");
  if (!config) return;
  ModelBuilder scratch(*config);
  const Quantization q = ReadQuantization(scratch, *config, BuildOptions{});
  // MLX: mlx-vlm keeps the towers in floating point itself (mlx_quantization.h).
  if (scratch.failed() || q.method == QuantMethod::kNone || q.method == QuantMethod::kMlx) return;
  uint64_t count = 0;
  std::string first;
  for (const auto& t : model.tensors) {
    if (t.component == language_component || t.shape.size() != 2 || !t.name.ends_with(".weight") ||
        t.name.find("embed") != std::string::npos || t.logical_params.has_value() ||
        (t.dtype != Dtype::kF32 && t.dtype != Dtype::kF16 && t.dtype != Dtype::kBF16)) {
      continue;
    }
    const std::string module = t.name.substr(0, t.name.size() - 7);
    if (q.method == QuantMethod::kMixed || SkipsModule(q, module)) continue;
    if (count++ == 0) first = module;
  }
  if (count == 0) return;
  model.assumptions.push_back(fmt::format(
      "quantization_config does not exclude {} weight matri{} of the vision/projector modules "
      "(first: {}); they are counted unquantized, as the releases memfit knows store them, while "
      "a loader that quantizes every nn.Linear not excluded would store them quantized",
      count, count == 1 ? "x" : "ces", first));
}

void NoteQuantizationNotApplied(const HfConfig& top, Model& model) {
  if (!top.Has("quantization_config")) return;
  model.notes.push_back(fmt::format(
      "{}: \"quantization_config\" is not applied to this {} model: its tensors are counted "
      "unquantized; the safetensors headers give the checkpoint's own",
      top.where(), top.model_type()));
}

Result<HfConfig> SubOrEmpty(const HfConfig& top, std::string_view key) {
  if (top.Has(key)) return top.Sub(key);
  return HfConfig::FromJson(nlohmann::json::object(), top.where() + ": " + std::string(key));
}

namespace {

void AppendLanguage(Model& into, Model&& language, const HfConfig& top,
                    std::vector<std::string>&& defaulted, const std::string& model_prefix,
                    const std::string& head_name, const std::string& component,
                    bool quantization_notes) {
  const auto rename = [&](std::string& name) {
    if (name.starts_with("model.")) {
      name = model_prefix + name.substr(5);
    } else if (name.starts_with("lm_head")) {
      name = head_name + name.substr(7);
    }
  };
  for (auto& t : language.tensors) {
    rename(t.name);
    if (!t.tied_to.empty()) rename(t.tied_to);
    if (t.component.empty()) t.component = component;
    into.tensors.push_back(std::move(t));
  }
  into.hp = language.hp;
  into.hp.text_config_key = "text_config";
  for (const auto& a : language.assumptions) into.assumptions.push_back("text_config: " + a);
  for (const auto& n : language.notes) into.notes.push_back("text_config: " + n);
  for (auto& a : defaulted) into.assumptions.push_back(std::move(a));
  if (!quantization_notes) return;
  if (language.quantization_config) {
    // The text builder applied it (TextSubConfig with names): say where the towers stand.
    if (!into.quantization_config) into.quantization_config = language.quantization_config;
    const nlohmann::json* q = QuantizationConfigJson(top);
    NoteUnquantizedTowers(q ? q : language.quantization_config.get(), component, into);
  } else {
    NoteQuantizationNotApplied(top, into);
  }
}

}  // namespace

void AppendLanguageModel(Model& into, Model&& language, const HfConfig& top,
                         std::vector<std::string>&& defaulted, const std::string& model_prefix,
                         const std::string& head_name, const std::string& component) {
  AppendLanguage(into, std::move(language), top, std::move(defaulted), model_prefix, head_name,
                 component, true);
}

MoonVitShape ReadMoonVitShape(ModelBuilder& b, const HfConfig& vision, bool read_qkv) {
  MoonVitShape s;
  s.hidden = Get(b, vision.Uint("vt_hidden_size"));
  s.intermediate = Get(b, vision.Uint("vt_intermediate_size"));
  s.depth = Get(b, vision.Uint("vt_num_hidden_layers"));
  s.qkv = read_qkv ? Get(b, vision.UintOr("qkv_hidden_size", s.hidden)) : s.hidden;
  s.patch = Get(b, vision.UintOr("patch_size", 14));
  s.pos_h = Get(b, vision.UintOr("init_pos_emb_height", 64));
  s.pos_w = Get(b, vision.UintOr("init_pos_emb_width", 64));
  s.pos_t = Get(b, vision.UintOr("init_pos_emb_time", 4));
  return s;
}

void EmitMoonVit3d(ModelBuilder& b, const MoonVitShape& s) {
  const auto norm = [&](const std::string& prefix) {
    if (s.rms) {
      b.RmsNorm(prefix, s.hidden);
    } else {
      b.LayerNorm(prefix, s.hidden);
    }
  };
  const uint64_t h = s.hidden;
  b.Conv("vision_tower.patch_embed.proj", 3, h, {s.patch, s.patch}, s.patch_bias);
  b.Param("vision_tower.patch_embed.pos_emb.weight", {s.pos_h, s.pos_w, h});
  b.Buffer("vision_tower.patch_embed.pos_emb.time_weight", {s.pos_t, 1, h}, Dtype::kF32, false);
  const uint64_t qkv3 = MulDims(b, s.qkv, 3, "3 x qkv_hidden_size");
  for (uint64_t i = 0; i < s.depth && !b.failed(); ++i) {
    const std::string l = Layer("vision_tower.encoder.blocks", i);
    norm(l + ".norm0");
    norm(l + ".norm1");
    b.Linear(l + ".mlp.fc0", h, s.intermediate, s.linear_bias);
    b.Linear(l + ".mlp.fc1", s.intermediate, h, s.linear_bias);
    b.Linear(l + ".wqkv", h, qkv3, s.attn_bias);
    b.Linear(l + ".wo", s.qkv, h, s.attn_bias);
  }
  norm("vision_tower.encoder.final_layernorm");
}

void PrependLanguageModel(Model& into, Model&& language) {
  for (auto& t : language.tensors) {
    t.name = "language_model." + t.name;
    if (!t.tied_to.empty()) t.tied_to = "language_model." + t.tied_to;
    t.component = "language_model";
  }
  into.hp = language.hp;
  for (const auto& a : language.assumptions) into.assumptions.push_back("text_config: " + a);
  for (const auto& n : language.notes) into.notes.push_back(n);
  std::vector<Tensor> towers = std::move(into.tensors);
  into.tensors = std::move(language.tensors);
  for (auto& t : towers) into.tensors.push_back(std::move(t));
}

namespace {

// text_config's model_type, else the row's default.
Result<std::string> VlmTextType(const HfConfig& full, const VlmSpec& s) {
  if (!full.Has("text_config")) return std::string(s.text_default);
  MEMFIT_ASSIGN_OR_RETURN(HfConfig sub, full.Sub("text_config"));
  return sub.Has("model_type") ? sub.model_type() : std::string(s.text_default);
}

const VlmText* FindVlmText(const VlmSpec& s, const std::string& type) {
  const auto text = std::find_if(s.texts.begin(), s.texts.end(), [&](const VlmText& t) {
    return t.type == nullptr || t.type == type;
  });
  return text == s.texts.end() ? nullptr : &*text;
}

// The text model of a VlmSpec row from `full`'s text_config (the errors name `top`).
Result<Model> BuildVlmText(const HfConfig& top, const HfConfig& full, const BuildOptions& o,
                           const VlmSpec& s, std::vector<std::string>& defaulted) {
  MEMFIT_ASSIGN_OR_RETURN(const std::string type, VlmTextType(full, s));
  const VlmText* text = FindVlmText(s, type);
  if (text == nullptr) {
    return MakeError(
        "{}: text_config.model_type \"{}\": memfit builds {} with {} language model "
        "only; reading the safetensors headers gives an exact answer",
        top.where(), type, s.family ? s.family : top.model_type(), s.texts_phrase);
  }
  const LanguageModelNames names = StoredAndLoadedNames(s.language_prefix, s.head);
  MEMFIT_ASSIGN_OR_RETURN(HfConfig config,
                          TextSub(full, "text_config", s.text_default, text->causal_lm, defaulted,
                                  s.carry_quantization ? &names : nullptr, s.class_defaults));
  ArchitectureBuilderFn build = text->build;
  if (build == nullptr) {
    const ArchitectureBuilder* found = FindArchitectureBuilder(type, text->causal_lm);
    if (found == nullptr || type == top.model_type()) {
      return MakeError(
          "{}: text_config.model_type \"{}\" has no builder in memfit; reading the "
          "safetensors headers gives an exact answer",
          top.where(), type);
    }
    build = found->build;
  }
  BuildOptions text_options = o;
  text_options.head_class.clear();
  return build(config, text_options);
}

// The vision tower row of `full`'s vision_config and that config.
Result<std::pair<const VisionTowerSpec*, HfConfig>> VlmVision(const HfConfig& top,
                                                              const HfConfig& full,
                                                              const VlmSpec& s) {
  nlohmann::json vision;
  if (full.Has("vision_config")) {
    MEMFIT_ASSIGN_OR_RETURN(HfConfig sub, full.Sub("vision_config"));
    vision = sub.raw();
  } else if (s.vision_default == nullptr) {
    return MakeError("{}: missing required field \"vision_config\"", top.where());
  } else {
    vision = nlohmann::json::parse(s.vision_default);
  }
  const VisionTowerSpec* tower = s.towers.front().second;
  if (s.vision_type != nullptr) {
    const std::string type = vision.value("model_type", s.vision_type);
    const auto it = std::find_if(s.towers.begin(), s.towers.end(),
                                 [&](const auto& t) { return type == t.first; });
    if (it == s.towers.end()) {
      return MakeError("{}: vision_config.model_type \"{}\" is not \"{}\" or \"{}\"", top.where(),
                       type, s.towers[0].first, s.towers[1].first);
    }
    tower = it->second;
  }
  MEMFIT_ASSIGN_OR_RETURN(HfConfig config,
                          HfConfig::FromJson(std::move(vision), top.where() + ": vision_config"));
  return std::pair{tower, std::move(config)};
}

uint64_t VlmSize(ModelBuilder& b, const VlmSpec& s, VlmDim dim, const VlmSizes& z) {
  switch (dim) {
    case VlmDim::kVision:
      return z.vision;
    case VlmDim::kVisionFeatures:
      return MulDims(b, z.vision, z.features, "vision hidden_size x feature layers");
    case VlmDim::kVisionMerged:
      return MulDims(b, z.vision, z.merge * z.merge,
                     fmt::format("vision hidden_size x {}^2", s.merge.key));
    case VlmDim::kText:
      return z.text;
    case VlmDim::kTextIntermediate:
      return z.text_intermediate;
    case VlmDim::kWidth:
      return z.width;
  }
  return 0;
}

void EmitConnector(ModelBuilder& b, const HfConfig& top, const VlmSpec& s, const VlmSizes& z,
                   bool bias) {
  for (const VlmItem& item : s.connector) {
    b.SetComponent(s.projector_component);
    const std::string name = std::string(s.projector) + "." + item.name;
    if (item.when != nullptr && !Get(b, top.BoolOr(item.when, true))) continue;
    const uint64_t in = VlmSize(b, s, item.in, z), out = VlmSize(b, s, item.out, z);
    const bool biased = HasBias(item.bias, bias);
    switch (item.op) {
      case VlmOp::kLinear:
        b.Linear(name, in, out, biased);
        break;
      case VlmOp::kLayerNorm:
        b.LayerNorm(name, in);
        break;
      case VlmOp::kRmsNorm:
        b.RmsNorm(name, in);
        break;
      case VlmOp::kParam:
        b.Param(name, {in, out});
        break;
      case VlmOp::kGatedProjection:
        GatedMlp(b, name, in, z.text_intermediate, out);
        break;
      case VlmOp::kImageNewline:
        b.SetComponent("");
        b.Param("image_newline", {z.text});
        break;
      case VlmOp::kHook:
        s.extra(b, top, s, z);
        break;
    }
  }
}

}  // namespace

Result<Model> BuildVlm(const HfConfig& c, const BuildOptions& o, const VlmSpec& s) {
  HfConfig full = c;
  if (s.prepare != nullptr) {
    MEMFIT_ASSIGN_OR_RETURN(full, s.prepare(c));
  }
  if (s.otherwise != nullptr) {
    MEMFIT_ASSIGN_OR_RETURN(const std::string type, VlmTextType(full, s));
    if (FindVlmText(s, type) == nullptr) return BuildVlm(c, o, *s.otherwise);
  }
  std::vector<std::string> defaulted;
  MEMFIT_ASSIGN_OR_RETURN(Model language, BuildVlmText(c, full, o, s, defaulted));
  MEMFIT_ASSIGN_OR_RETURN(auto vision, VlmVision(c, full, s));
  ModelBuilder b(c);
  Model& m = b.model();
  if (m.architecture.empty() && s.architecture != nullptr) m.architecture = s.architecture;
  VlmSizes z{.text = language.hp.hidden_size, .text_intermediate = language.hp.intermediate_size};
  const bool bias = s.bias_key != nullptr && Get(b, c.BoolOr(s.bias_key, s.bias_default));
  if (c.Has("vision_feature_layer") && c.raw()["vision_feature_layer"].is_array()) {
    z.features = c.raw()["vision_feature_layer"].size();
  }
  if (s.merge.key != nullptr) z.merge = Get(b, c.UintOr(s.merge.key, s.merge.fallback));
  if (s.width.key != nullptr) z.width = Get(b, c.UintOr(s.width.key, s.width.fallback));
  if (!b.failed() && s.merge.key != nullptr && (z.merge == 0 || z.merge > 64)) {
    return MakeError("{}: \"{}\" = {} must be in 1..64", c.where(), s.merge.key, z.merge);
  }
  if (!b.failed() && s.width_nonzero && z.width == 0) {
    return MakeError("{}: \"{}\" must not be zero", c.where(), s.width.key);
  }
  b.SetComponent(s.vision_component);
  z.vision = EmitVisionTower(b, vision.second, *vision.first, s.vision_prefix).hidden;
  if (b.failed()) return b.Finish();
  EmitConnector(b, c, s, z, bias);
  if (b.failed()) return b.Finish();
  AppendLanguage(m, std::move(language), c, std::move(defaulted), s.language_prefix, s.head,
                 s.language_component, s.quantization_notes);
  m.no_split_patterns = s.no_split;
  if (s.base_model_prefix != nullptr) m.base_model_prefix = s.base_model_prefix;
  return b.Finish();
}

Result<Model> BuildTextOfType(const HfConfig& top, const HfConfig& text,
                              std::string_view model_type, ArchitectureBuilderFn build,
                              const BuildOptions& options) {
  if (text.model_type() != model_type) {
    return MakeError("{}: text_config.model_type \"{}\" is not \"{}\"", top.where(),
                     text.model_type(), model_type);
  }
  BuildOptions text_options = options;
  text_options.head_class.clear();
  return build(text, text_options);
}

}  // namespace memfit::arch
