// File choice for a Hub repository (see file_choice.h). Mirrors ReadModelDirectory for plain
// transformers repositories so that the Hub and a local copy give the same inputs.

#include "hub/net/file_choice.h"

#include <algorithm>
#include <set>

#include "memfit/json.h"

namespace memfit::hubnet {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

// Directly inside `folder` (not in a subfolder).
bool InFolder(std::string_view path, std::string_view folder) {
  return path.starts_with(folder) && path.substr(folder.size()).find('/') == std::string_view::npos;
}

// "diffusion_pytorch_model.fp16.safetensors" is a variant; "model.safetensors" is not.
bool IsVariant(std::string_view name) {
  auto base = name.substr(name.rfind('/') + 1);
  auto stem = base.substr(0, base.find(".safetensors"));
  return stem.find('.') != std::string_view::npos;
}

// The weights of one folder: an index if any, else model.safetensors-like files.
std::optional<WeightGroup> GroupFor(const std::set<std::string>& names, const std::string& folder) {
  WeightGroup g{.folder = folder};
  for (const char* index : {"model.safetensors.index.json",
                            "diffusion_pytorch_model.safetensors.index.json"}) {
    if (names.count(folder + index)) {
      g.index_path = folder + index;
      return g;
    }
  }
  for (const char* single : {"model.safetensors", "diffusion_pytorch_model.safetensors"}) {
    if (names.count(folder + single)) {
      g.files.push_back(folder + single);
      return g;
    }
  }
  std::vector<std::string> plain, variants;
  for (const auto& n : names) {
    if (InFolder(n, folder) && EndsWith(n, ".safetensors")) (IsVariant(n) ? variants : plain).push_back(n);
  }
  if (!plain.empty()) {
    g.files = plain;
    return g;
  }
  if (!variants.empty()) {
    g.files = {variants.front()};
    return g;
  }
  return std::nullopt;
}

}  // namespace

Result<FilePlan> PlanFiles(std::string_view repo_id, const std::vector<RepoFile>& files,
                           std::string_view gguf_choice, std::string_view model_index_json,
                           std::string_view modules_json) {
  FilePlan plan;
  std::set<std::string> names;
  for (const auto& f : files) {
    names.insert(f.path);
    if (EndsWith(f.path, ".gguf")) plan.gguf_files.push_back(f.path);
  }
  std::sort(plan.gguf_files.begin(), plan.gguf_files.end());
  if (names.count("config.json")) plan.config_path = "config.json";

  if (!gguf_choice.empty()) {
    if (!names.count(std::string(gguf_choice))) {
      std::string list;
      for (const auto& g : plan.gguf_files) list += (list.empty() ? "" : ", ") + g;
      return MakeError("{}: --gguf-file {} is not in the repository (GGUF files: {})", repo_id,
                       gguf_choice, list.empty() ? "none" : list);
    }
    plan.layout = "gguf";
    plan.gguf_file = std::string(gguf_choice);
    return plan;
  }

  if (names.count("model_index.json")) {
    plan.layout = "diffusers";
    plan.json_files.push_back("model_index.json");
    if (model_index_json.empty()) return plan;  // the caller fetches it and asks again
    MEMFIT_ASSIGN_OR_RETURN(auto json, ParseJson(model_index_json, "model_index.json"));
    if (!json.is_object()) return MakeError("{}: model_index.json: not a JSON object", repo_id);
    for (const auto& [component, value] : json.items()) {
      // Components are ["library", "ClassName"]; other keys (_class_name, ...) are not.
      if (component.starts_with("_") || !value.is_array() || value.size() != 2 ||
          !value[0].is_string()) {
        continue;
      }
      if (auto g = GroupFor(names, component + "/")) plan.groups.push_back(std::move(*g));
    }
    plan.config_path.clear();
    plan.assumptions.push_back(
        "diffusers pipeline: every component's weights are counted; tensor names carry the "
        "component folder as a prefix");
  } else if (names.count("modules.json")) {
    plan.layout = "sentence-transformers";
    plan.json_files.push_back("modules.json");
    if (modules_json.empty()) return plan;
    MEMFIT_ASSIGN_OR_RETURN(auto json, ParseJson(modules_json, "modules.json"));
    if (!json.is_array()) return MakeError("{}: modules.json: not a JSON array", repo_id);
    std::set<std::string> folders;
    for (const auto& module : json) {
      if (!module.is_object() || !module.contains("path") || !module["path"].is_string()) {
        return MakeError("{}: modules.json: each module needs a \"path\" string", repo_id);
      }
      std::string path = module["path"].get<std::string>();
      if (!path.empty() && !IsSafeRepoPath(path)) {
        return MakeError("{}: modules.json: bad module path \"{}\"", repo_id, path);
      }
      folders.insert(path.empty() ? "" : path + "/");
    }
    folders.insert("");  // the transformer at the root
    for (const auto& folder : folders) {
      if (auto g = GroupFor(names, folder)) plan.groups.push_back(std::move(*g));
    }
  } else {
    plan.layout = "transformers";
    bool has_root_safetensors = false;
    for (const auto& n : names) has_root_safetensors |= InFolder(n, "") && EndsWith(n, ".safetensors");
    if (names.count("model.safetensors.index.json")) {
      plan.groups.push_back({.folder = "", .index_path = "model.safetensors.index.json"});
      plan.root_index_path = "model.safetensors.index.json";
    } else if (names.count("model.safetensors")) {
      plan.groups.push_back({.folder = "", .files = {"model.safetensors"}});
    } else if (has_root_safetensors) {
      WeightGroup g;
      for (const auto& n : names) {
        if (InFolder(n, "") && EndsWith(n, ".safetensors")) g.files.push_back(n);
      }
      plan.groups.push_back(std::move(g));
    } else if (names.count("pytorch_model.bin.index.json")) {
      plan.root_index_path = "pytorch_model.bin.index.json";
    }
    if (plan.groups.empty() && plan.config_path.empty()) {
      if (plan.gguf_files.empty()) {
        return MakeError("{}: nothing memfit can read: no config.json, safetensors or GGUF files",
                         repo_id);
      }
      plan.layout = "gguf";
      std::vector<std::string> candidates;
      for (const auto& g : plan.gguf_files) {
        if (g.find("mmproj") == std::string::npos) candidates.push_back(g);
      }
      if (candidates.size() != 1) {
        std::string list;
        for (const auto& g : plan.gguf_files) list += (list.empty() ? "" : ", ") + g;
        return MakeError("{}: {} GGUF files; choose one with --gguf-file: {}", repo_id,
                         plan.gguf_files.size(), list);
      }
      plan.gguf_file = candidates.front();
      return plan;
    }
  }
  if (!plan.config_path.empty()) plan.json_files.insert(plan.json_files.begin(), plan.config_path);
  if (!plan.root_index_path.empty() && plan.groups.empty()) {
    plan.json_files.push_back(plan.root_index_path);
  }
  for (const auto& g : plan.groups) {
    if (!g.index_path.empty()) plan.json_files.push_back(g.index_path);
  }
  return plan;
}

}  // namespace memfit::hubnet
