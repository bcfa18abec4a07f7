// Local model resolution: directory, single file, Hugging Face cache, built-in catalog.
// HF cache layout (huggingface_hub docs, guides/manage-cache.md):
//   $HF_HUB_CACHE/models--{org}--{name}/refs/{revision}   text: commit sha
//   $HF_HUB_CACHE/models--{org}--{name}/snapshots/{sha}/  the files (symlinks into blobs/)

#include "memfit/local_source.h"

#include "memfit/hf_quant_config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "memfit/byte_source.h"
#include "memfit/catalog.h"
#include "memfit/gguf.h"

namespace memfit {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kMaxJsonFileBytes = 64ull << 20;  // config and index files are small

Result<std::string> ReadSmallFile(const fs::path& path) {
  auto source = OpenFileByteSource(path.string());
  MEMFIT_ASSIGN_OR_RETURN(uint64_t size, source->Size());
  if (size > kMaxJsonFileBytes) {
    return MakeError("{}: file of {} bytes is too large for a JSON metadata file", path.string(), size);
  }
  return source->Read(0, static_cast<size_t>(size));
}

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool IsHexSha(std::string_view s) {
  return s.size() == 40 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// A .gguf file, with its sibling split files when its name is PREFIX-0000i-of-0000N.gguf.
Result<std::vector<GgufShard>> ReadGgufFiles(const fs::path& path) {
  std::vector<fs::path> paths{path};
  if (auto split = ParseGgufSplitName(path.string())) {
    paths.clear();
    for (uint32_t i = 1; i <= split->count; ++i) {
      fs::path p = GgufSplitPath(split->prefix, i, split->count);
      if (!IsFile(p)) return MakeError("{}: split file {} of {} is missing", p.string(), i, split->count);
      paths.push_back(p);
    }
  }
  std::vector<GgufShard> shards;
  for (const auto& p : paths) {
    auto source = OpenFileByteSource(p.string());
    MEMFIT_ASSIGN_OR_RETURN(GgufFile file, ReadGgufHeader(*source));
    shards.push_back({p.filename().string(), std::move(file)});
  }
  return shards;
}

Result<SafetensorsHeader> ReadHeaderFile(const fs::path& path) {
  auto source = OpenFileByteSource(path.string());
  return ReadSafetensorsHeader(*source);
}

}  // namespace

bool IsSafeRepoPath(std::string_view path) {
  if (path.empty() || path.size() > 1024 || path.front() == '/' ||
      path.find('\0') != std::string_view::npos || path.find('\\') != std::string_view::npos) {
    return false;
  }
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view seg = path.substr(start, end - start);
    if (seg.empty() || seg == "." || seg == "..") return false;
    start = end + 1;
  }
  return true;
}

bool LooksLikeHubId(std::string_view spec) {
  if (spec.empty() || spec.size() > 200) return false;
  size_t slashes = 0;
  for (char c : spec) {
    if (c == '/') ++slashes;
    else if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return false;
    }
  }
  return slashes <= 1 && spec.front() != '/' && spec.back() != '/' &&
         spec.find("..") == std::string_view::npos && spec.front() != '.';
}

std::string DefaultHfHubCache() {
  if (const char* v = std::getenv("HF_HUB_CACHE"); v && *v) return v;
  if (const char* v = std::getenv("HUGGINGFACE_HUB_CACHE"); v && *v) return v;
  if (const char* v = std::getenv("HF_HOME"); v && *v) return (fs::path(v) / "hub").string();
  if (const char* v = std::getenv("XDG_CACHE_HOME"); v && *v) {
    return (fs::path(v) / "huggingface" / "hub").string();
  }
  const char* home = std::getenv("HOME");
  return (fs::path(home ? home : "/") / ".cache" / "huggingface" / "hub").string();
}

Result<ModelInputs> ReadModelDirectory(const std::string& dir_string) {
  const fs::path dir(dir_string);
  ModelInputs inputs;
  inputs.location = dir_string;
  inputs.name = dir.filename().empty() ? dir.parent_path().filename().string()
                                       : dir.filename().string();
  if (IsFile(dir / "config.json")) {
    MEMFIT_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(dir / "config.json"));
    MEMFIT_ASSIGN_OR_RETURN(inputs.config, HfConfig::Parse(text, (dir / "config.json").string()));
    if (IsFile(dir / "hf_quant_config.json")) {  // ModelOpt's quantization, beside config.json
      MEMFIT_ASSIGN_OR_RETURN(std::string quant, ReadSmallFile(dir / "hf_quant_config.json"));
      MEMFIT_ASSIGN_OR_RETURN(inputs.config,
                              MergeHfQuantConfig(*inputs.config, quant,
                                                 (dir / "hf_quant_config.json").string()));
    }
  }
  for (const char* index_name : {"model.safetensors.index.json", "pytorch_model.bin.index.json"}) {
    if (!IsFile(dir / index_name)) continue;
    MEMFIT_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(dir / index_name));
    MEMFIT_ASSIGN_OR_RETURN(inputs.index, ParseWeightIndex(text, (dir / index_name).string()));
    inputs.index_name = index_name;
    break;
  }
  if (inputs.index && inputs.index_name == "model.safetensors.index.json") {
    size_t missing = 0;
    for (const auto& shard : inputs.index->shards()) {
      if (!IsFile(dir / shard)) {
        ++missing;
        continue;
      }
      MEMFIT_ASSIGN_OR_RETURN(auto header, ReadHeaderFile(dir / shard));
      inputs.safetensors.emplace_back(shard, std::move(header));
    }
    if (missing > 0 && !inputs.safetensors.empty()) {
      return MakeError("{}: {} of {} shards listed in model.safetensors.index.json are missing",
                       dir_string, missing, inputs.index->shards().size());
    }
    if (missing > 0) {
      inputs.assumptions.push_back(
          "no shard files present: tensor sizes come from config.json, checked against the "
          "index's total_size");
    }
  } else if (IsFile(dir / "model.safetensors")) {
    MEMFIT_ASSIGN_OR_RETURN(auto header, ReadHeaderFile(dir / "model.safetensors"));
    inputs.safetensors.emplace_back("model.safetensors", std::move(header));
  } else if (!inputs.index) {
    // Any other safetensors files (single-file exports with other names).
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".safetensors" && IsFile(entry.path())) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      MEMFIT_ASSIGN_OR_RETURN(auto header, ReadHeaderFile(f));
      inputs.safetensors.emplace_back(f.filename().string(), std::move(header));
    }
  }
  if (!inputs.config && inputs.safetensors.empty()) {
    return MakeError("{}: nothing usable: expected config.json, model.safetensors, "
                     "model.safetensors.index.json (+ shards) or pytorch_model.bin.index.json",
                     dir_string);
  }
  return inputs;
}

Result<LocalResolution> ResolveLocalModel(std::string_view spec, const LocalResolveOptions& options) {
  LocalResolution out;
  const fs::path path{std::string(spec)};
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    MEMFIT_ASSIGN_OR_RETURN(out.inputs, ReadModelDirectory(path.string()));
    out.kind = InputKind::kDirectory;
    return out;
  }
  if (fs::exists(path, ec)) {
    if (!IsFile(path)) return MakeError("{}: not a regular file or directory", path.string());
    out.kind = InputKind::kFile;
    out.inputs.location = path.string();
    out.inputs.name = path.filename().string();
    if (path.extension() == ".safetensors") {
      MEMFIT_ASSIGN_OR_RETURN(auto header, ReadHeaderFile(path));
      out.inputs.safetensors.emplace_back(path.filename().string(), std::move(header));
      // A config.json beside the file gives the architecture.
      if (IsFile(path.parent_path() / "config.json")) {
        MEMFIT_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path.parent_path() / "config.json"));
        MEMFIT_ASSIGN_OR_RETURN(out.inputs.config,
                                HfConfig::Parse(text, (path.parent_path() / "config.json").string()));
      }
      return out;
    }
    if (path.extension() == ".gguf") {
      MEMFIT_ASSIGN_OR_RETURN(out.inputs.gguf, ReadGgufFiles(path));
      if (auto split = ParseGgufSplitName(path.filename().string())) {
        out.inputs.name = fs::path(split->prefix).filename().string();
      }
      return out;
    }
    if (path.extension() == ".json") {
      MEMFIT_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path));
      MEMFIT_ASSIGN_OR_RETURN(out.inputs.config, HfConfig::Parse(text, path.string()));
      // A config.json is named after its folder ("./config.json" too); any other file after
      // itself ("cfgs/llama-8b.json" is "llama-8b.json", not "cfgs").
      const fs::path folder = fs::absolute(path, ec).lexically_normal().parent_path().filename();
      out.inputs.name = path.filename() == "config.json" && !folder.empty()
                            ? folder.string()
                            : path.filename().string();
      return out;
    }
    return MakeError("{}: unsupported file type (expected a .safetensors or .gguf file, a config.json, or a "
                     "model directory)", path.string());
  }
  if (!LooksLikeHubId(spec)) {
    out.kind = InputKind::kNotFound;
    return out;
  }
  // The local Hugging Face cache.
  if (spec.find('/') != std::string_view::npos && !options.hf_hub_cache.empty()) {
    std::string repo_dir = "models--" + std::string(spec);
    for (size_t pos; (pos = repo_dir.find('/')) != std::string::npos;) repo_dir.replace(pos, 1, "--");
    const fs::path repo = fs::path(options.hf_hub_cache) / repo_dir;
    // --revision (or a server request's "revision") is joined under refs/ before the Hub client
    // would have validated it: it must stay inside ("main", "v1.0", "refs/pr/1").
    if (IsSafeRepoPath(options.revision) && fs::is_directory(repo, ec)) {
      std::string sha;
      if (IsFile(repo / "refs" / options.revision)) {
        MEMFIT_ASSIGN_OR_RETURN(sha, ReadSmallFile(repo / "refs" / options.revision));
        while (!sha.empty() && std::isspace(static_cast<unsigned char>(sha.back()))) sha.pop_back();
        if (!IsHexSha(sha)) sha.clear();  // huggingface_hub writes a commit sha; nothing else is a snapshot
      } else if (IsHexSha(options.revision)) {
        sha = options.revision;
      }
      if (!sha.empty() && fs::is_directory(repo / "snapshots" / sha, ec)) {
        MEMFIT_ASSIGN_OR_RETURN(out.inputs, ReadModelDirectory((repo / "snapshots" / sha).string()));
        out.inputs.name = std::string(spec);
        // The same words as a read from the Hub: the same files at the same commit describe
        // the same model, wherever the bytes came from (the Hub client's summary line on stderr
        // says that).
        out.inputs.assumptions.push_back(
            fmt::format("Hub revision {} is commit {}", options.revision, sha));
        out.kind = InputKind::kHfCache;
        return out;
      }
    }
  }
  if (options.use_catalog) {
    if (const auto* entry = FindCatalogEntry(spec)) {
      out.kind = InputKind::kCatalog;
      out.inputs.name = std::string(entry->id);
      out.inputs.location = "catalog";
      MEMFIT_ASSIGN_OR_RETURN(out.inputs.config,
                              HfConfig::Parse(entry->config_json,
                                              fmt::format("catalog:{}", entry->id)));
      out.inputs.assumptions.push_back(
          "from memfit's built-in catalog (published hyperparameters; no network used)");
      return out;
    }
  }
  out.kind = InputKind::kNotFound;
  return out;
}

}  // namespace memfit
