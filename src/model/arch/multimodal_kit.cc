#include "model/arch/multimodal_kit.h"
#include "formats/hf_config_json.h"

#include <fmt/format.h>

#include "model/hparams/config_keys.h"

namespace memfit::arch {

Result<HfConfig> TextSubConfig(const HfConfig& top, std::string_view key,
                               std::string_view default_type, std::string_view causal_lm_class,
                               std::vector<std::string>& assumptions) {
  nlohmann::json text = nlohmann::json::object();
  if (top.Has(key)) {
    auto sub = top.Sub(key);
    if (!sub) return sub.error();
    text = sub->raw();
  }
  if (!text.contains("model_type")) text["model_type"] = default_type;
  // The tie: the text config's, else the composite's, else the text class default.
  if (!text.contains("tie_word_embeddings") && top.Has("tie_word_embeddings")) {
    text["tie_word_embeddings"] = top.raw()["tie_word_embeddings"];
  }
  if (text["model_type"].is_string()) {
    if (const auto* defaults = hparams::ConfigClassDefaults(text["model_type"].get<std::string>())) {
      std::string list;
      for (const auto& [k, v] : defaults->items()) {
        if (text.contains(k)) continue;  // an explicit null (sliding_window) stays
        text[k] = v;
        list += fmt::format("{}{} = {}", list.empty() ? "" : ", ", k, v.dump());
      }
      if (!list.empty()) {
        assumptions.push_back(fmt::format(
            "{}: {} absent, the \"{}\" config class's defaults are used (as transformers does): "
            "{}", key, "fields", text["model_type"].get<std::string>(), list));
      }
    }
  }
  if (!text.contains("torch_dtype") && !text.contains("dtype")) {
    for (const char* dtype_key : {"torch_dtype", "dtype"}) {
      if (top.Has(dtype_key)) text[dtype_key] = top.raw()[dtype_key];
    }
  }
  text["architectures"] = {causal_lm_class};
  return HfConfig::FromJson(std::move(text), top.where() + ": " + std::string(key));
}

void NoteQuantizationNotApplied(const HfConfig& top, Model& model) {
  if (!top.Has("quantization_config")) return;
  model.notes.push_back(fmt::format(
      "{}: \"quantization_config\" is not applied to this {} model: its tensors are counted "
      "unquantized; the safetensors headers give the checkpoint's own", top.where(),
      top.model_type()));
}

Result<HfConfig> SubOrEmpty(const HfConfig& top, std::string_view key) {
  if (top.Has(key)) return top.Sub(key);
  return HfConfig::FromJson(nlohmann::json::object(), top.where() + ": " + std::string(key));
}

void AppendLanguageModel(Model& into, Model&& language, const HfConfig& top,
                         std::vector<std::string>&& defaulted, const std::string& model_prefix,
                         const std::string& head_name, const std::string& component) {
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
  NoteQuantizationNotApplied(top, into);
}

}  // namespace memfit::arch
