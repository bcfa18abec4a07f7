// File choice for a Hub repository (see file_choice.h). Mirrors ReadModelDirectory for plain
// transformers repositories so that the Hub and a local copy give the same inputs.

#include "hub/net/file_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "memfit/gguf.h"
#include "formats/json.h"

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
  for (const char* index :
       {"model.safetensors.index.json", "diffusion_pytorch_model.safetensors.index.json"}) {
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
    if (InFolder(n, folder) && EndsWith(n, ".safetensors"))
      (IsVariant(n) ? variants : plain).push_back(n);
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

bool AllDigits(std::string_view s) {
  return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// See WeightGroup::likely_shards.
std::vector<std::string> LikelyShards(const std::set<std::string>& names, const std::string& folder,
                                      const std::string& index_path) {
  constexpr std::string_view kIndexSuffix = ".safetensors.index.json";
  constexpr std::string_view kSuffix = ".safetensors";
  std::string_view base = std::string_view(index_path).substr(folder.size());
  if (!base.ends_with(kIndexSuffix)) return {};
  const std::string prefix =
      folder + std::string(base.substr(0, base.size() - kIndexSuffix.size())) + "-";
  std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> sets;  // "of" count -> files
  for (auto it = names.lower_bound(prefix); it != names.end() && it->starts_with(prefix); ++it) {
    std::string_view rest = std::string_view(*it).substr(prefix.size());
    if (!rest.ends_with(kSuffix)) continue;
    rest.remove_suffix(kSuffix.size());
    size_t of = rest.find("-of-");
    if (of == std::string_view::npos) continue;
    std::string_view number = rest.substr(0, of), count = rest.substr(of + 4);
    if (!AllDigits(number) || !AllDigits(count)) continue;
    sets[std::string(count)].emplace_back(std::stoull(std::string(number)), *it);
  }
  std::vector<std::string> out;
  int complete = 0;
  for (auto& [count, files] : sets) {
    const uint64_t n = std::stoull(count);
    if (n != files.size()) continue;
    std::vector<bool> seen(files.size(), false);
    bool ok = true;
    for (const auto& [number, path] : files) {
      ok = ok && number >= 1 && number <= n && !seen[number - 1];
      if (ok) seen[number - 1] = true;
    }
    if (!ok) continue;
    ++complete;
    out.clear();
    for (auto& [number, path] : files) out.push_back(path);
  }
  if (complete != 1) return {};
  return out;
}

bool ContainsIgnoreCase(std::string_view haystack, std::string_view needle) {
  auto lower = [](std::string_view v) {
    std::string out(v);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  return lower(haystack).find(lower(needle)) != std::string::npos;
}

// One GGUF model of a repository: a single file or a gguf-split set.
struct GgufModel {
  std::string name = "";                // the file, or the first file of the split
  std::vector<std::string> paths = {};  // split order; only the present ones when incomplete
  uint32_t count = 1;                   // files the model consists of
  std::string first_missing = "";       // a missing split file, or ""
};

std::vector<GgufModel> GgufModels(const std::vector<std::string>& gguf_files) {
  const std::set<std::string> present(gguf_files.begin(), gguf_files.end());
  std::vector<GgufModel> models;
  std::set<std::string> done;  // split prefixes + counts already grouped
  for (const auto& f : gguf_files) {
    auto split = ParseGgufSplitName(f);
    if (!split) {
      models.push_back({.name = f, .paths = {f}});
      continue;
    }
    std::string key = split->prefix + "\n" + std::to_string(split->count);
    if (!done.insert(key).second) continue;
    GgufModel m{.name = GgufSplitPath(split->prefix, 1, split->count), .count = split->count};
    // A split claiming more files than the repository holds is incomplete; do not list them all.
    for (uint32_t i = 1; i <= split->count; ++i) {
      std::string p = GgufSplitPath(split->prefix, i, split->count);
      if (present.count(p)) {
        m.paths.push_back(std::move(p));
      } else if (m.first_missing.empty()) {
        m.first_missing = std::move(p);
        if (split->count > gguf_files.size()) break;
      }
    }
    models.push_back(std::move(m));
  }
  return models;
}

std::string Describe(const std::vector<GgufModel>& models) {
  std::string list;
  for (const auto& m : models) {
    list += (list.empty() ? "" : ", ") + m.name;
    if (m.count > 1) {
      list += fmt::format(" ({} files{})", m.count, m.first_missing.empty() ? "" : ", incomplete");
    }
  }
  return list.empty() ? "none" : list;
}

Status Choose(std::string_view repo_id, const GgufModel& model, FilePlan& plan) {
  if (!model.first_missing.empty()) {
    return MakeError("{}: split file {} of the {} files of {} is not in the repository", repo_id,
                     model.first_missing, model.count, model.name);
  }
  plan.layout = "gguf";
  plan.gguf_file = model.name;
  plan.gguf_paths = model.paths;
  return Ok{};
}

// --gguf-file: a path (any split file), else a unique model whose name contains it.
Status ChooseGguf(std::string_view repo_id, std::string_view choice, FilePlan& plan) {
  const std::vector<GgufModel> models = GgufModels(plan.gguf_files);
  std::vector<const GgufModel*> matches;
  for (const auto& m : models) {
    if (std::find(m.paths.begin(), m.paths.end(), choice) != m.paths.end() || m.name == choice) {
      return Choose(repo_id, m, plan);
    }
    if (ContainsIgnoreCase(m.name, choice)) matches.push_back(&m);
  }
  if (matches.size() == 1) {
    MEMFIT_RETURN_IF_ERROR(Choose(repo_id, *matches.front(), plan));
    plan.assumptions.push_back(
        fmt::format("--gguf-file {}: the GGUF model {}", choice, plan.gguf_file));
    return Ok{};
  }
  if (matches.size() > 1) {
    std::vector<GgufModel> several;
    for (const auto* m : matches) several.push_back(*m);
    return MakeError("{}: --gguf-file {} matches {} GGUF models: {}", repo_id, choice,
                     matches.size(), Describe(several));
  }
  return MakeError("{}: --gguf-file {} is not in the repository (GGUF files: {})", repo_id, choice,
                   Describe(models));
}

}  // namespace

std::string ListGgufModels(const std::vector<std::string>& gguf_files) {
  return Describe(GgufModels(gguf_files));
}

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
    MEMFIT_RETURN_IF_ERROR(ChooseGguf(repo_id, gguf_choice, plan));
    return plan;
  }

  if (names.count("model_index.json")) {
    plan.layout = "diffusers";
    if (model_index_json.empty()) {  // the caller fetches it and asks again
      plan.pending_file = "model_index.json";
      return plan;
    }
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
    if (modules_json.empty()) {
      plan.pending_file = "modules.json";
      return plan;
    }
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
    for (const auto& n : names)
      has_root_safetensors |= InFolder(n, "") && EndsWith(n, ".safetensors");
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
      // A GGUF repository: its one model (projectors aside), else the user chooses.
      const std::vector<GgufModel> models = GgufModels(plan.gguf_files);
      std::vector<const GgufModel*> candidates;
      for (const auto& m : models) {
        if (!ContainsIgnoreCase(m.name, "mmproj")) candidates.push_back(&m);
      }
      if (candidates.size() != 1) {
        return MakeError(
            "{}: {} GGUF models; choose one with --gguf-file (a file, or a part of "
            "its name such as Q4_K_M): {}",
            repo_id, models.size(), Describe(models));
      }
      MEMFIT_RETURN_IF_ERROR(Choose(repo_id, *candidates.front(), plan));
      if (models.size() > 1) {
        std::vector<GgufModel> projectors;
        for (const auto& m : models) {
          if (m.name != plan.gguf_file) projectors.push_back(m);
        }
        plan.assumptions.push_back(
            fmt::format("the GGUF model {} (the repository's other GGUF files are projectors: {})",
                        plan.gguf_file, Describe(projectors)));
      }
      return plan;
    }
  }
  if (!plan.gguf_files.empty()) {
    plan.assumptions.push_back(fmt::format(
        "{}; read one with --gguf-file: {}",
        plan.groups.empty() ? "no safetensors weights; the repository's GGUF models"
                            : "read the safetensors weights; the repository also has GGUF models",
        Describe(GgufModels(plan.gguf_files))));
  }
  if (!plan.config_path.empty()) plan.json_files.insert(plan.json_files.begin(), plan.config_path);
  if (!plan.config_path.empty() && names.count("hf_quant_config.json")) {
    plan.quant_config_path = "hf_quant_config.json";
    plan.json_files.insert(plan.json_files.begin() + 1, plan.quant_config_path);
  }
  if (!plan.root_index_path.empty() && plan.groups.empty()) {
    plan.json_files.push_back(plan.root_index_path);
  }
  for (auto& g : plan.groups) {
    if (g.index_path.empty()) continue;
    plan.json_files.push_back(g.index_path);
    g.likely_shards = LikelyShards(names, g.folder, g.index_path);
  }
  return plan;
}

}  // namespace memfit::hubnet
