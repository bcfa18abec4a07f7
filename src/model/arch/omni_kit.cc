#include "model/arch/omni_kit.h"

#include <fmt/format.h>

#include <algorithm>

#include "formats/hf_config_json.h"

namespace memfit::arch {

Result<nlohmann::json> OmniSubConfig(
    const HfConfig& parent, std::string_view key, const nlohmann::json& defaults,
    std::string_view label, std::vector<std::string>& assumptions,
    std::initializer_list<std::pair<std::string_view, std::string_view>> aliases) {
  nlohmann::json sub = nlohmann::json::object();
  if (auto it = parent.raw().find(std::string(key)); it != parent.raw().end() && !it->is_null()) {
    MEMFIT_ASSIGN_OR_RETURN(HfConfig config, parent.Sub(key));
    sub = config.raw();
  }
  for (const auto& [alias, field] : aliases) {
    const std::string name(field);
    if (auto it = sub.find(std::string(alias));
        it != sub.end() && !it->is_null() && (!sub.contains(name) || sub[name].is_null())) {
      sub[name] = *it;
    }
  }
  std::string list;
  for (const auto& [k, v] : defaults.items()) {
    if (sub.contains(k) && !sub[k].is_null()) continue;
    sub[k] = v;
    list += fmt::format("{}{} = {}", list.empty() ? "" : ", ", k, v.dump());
  }
  if (!list.empty()) {
    assumptions.push_back(fmt::format(
        "{}: fields absent, the config class's defaults are used (as transformers does): {}", label,
        list));
  }
  return sub;
}

Result<Model> BuildOmniPart(ArchitectureBuilderFn builder, nlohmann::json json,
                            const std::string& where, const BuildOptions& options) {
  MEMFIT_ASSIGN_OR_RETURN(HfConfig config, HfConfig::FromJson(std::move(json), where));
  BuildOptions part_options = options;
  part_options.head_class.clear();
  part_options.buffers = BufferConvention::kCurrent;
  return builder(config, part_options);
}

void AppendOmniPart(Model& into, Model&& part, const std::string& model_prefix,
                    const std::string& head_name, const std::string& component,
                    std::string_view label, std::initializer_list<std::string_view> skip) {
  const auto rename = [&](std::string& name) {
    if (name.starts_with("model.")) {
      name = model_prefix + name.substr(6);
    } else if (name.starts_with("lm_head")) {
      name = head_name + name.substr(7);
    }
  };
  into.tensors.reserve(into.tensors.size() + part.tensors.size());
  for (auto& t : part.tensors) {
    if (std::find(skip.begin(), skip.end(), t.name) != skip.end()) continue;
    rename(t.name);
    if (!t.tied_to.empty()) rename(t.tied_to);
    t.component = component;
    into.tensors.push_back(std::move(t));
  }
  for (const auto& a : part.assumptions)
    into.assumptions.push_back(fmt::format("{}: {}", label, a));
  for (const auto& n : part.notes) into.notes.push_back(fmt::format("{}: {}", label, n));
}

std::vector<uint64_t> UintList(ModelBuilder& b, const HfConfig& c, std::string_view key,
                               std::vector<uint64_t> fallback, size_t max_entries) {
  const auto& raw = c.raw();
  auto it = raw.find(std::string(key));
  if (it == raw.end() || it->is_null()) return fallback;
  std::vector<uint64_t> out;
  bool ok = it->is_array() && it->size() <= max_entries;
  if (ok) {
    for (const auto& v : *it) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
          v.get<uint64_t>() > kMaxConfigDimension) {
        ok = false;
        break;
      }
      out.push_back(v.get<uint64_t>());
    }
  }
  if (!ok) {
    b.Fail(MakeError("{}: field \"{}\" must list at most {} non-negative integers up to {}",
                     c.where(), key, max_entries, kMaxConfigDimension));
    return {};
  }
  return out;
}

void SnakeBeta(ModelBuilder& b, const std::string& prefix, uint64_t channels) {
  b.Param(prefix + ".alpha", {channels});
  b.Param(prefix + ".beta", {channels});
}

void ConvTranspose1d(ModelBuilder& b, const std::string& prefix, uint64_t in, uint64_t out,
                     uint64_t kernel) {
  b.Param(prefix + ".weight", {in, out, kernel});
  b.Param(prefix + ".bias", {out});
}

}  // namespace memfit::arch
