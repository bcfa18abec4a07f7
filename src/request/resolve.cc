// MODEL -> inputs: a local path, the HF cache, the Hub (with memfit's cache), the catalog.
// docs/hub.md, "Resolution order". Resolved and described models are kept by the process's model
// cache when it is on (memfit/resolve.h, request/shared_cache.h).

#include "memfit/resolve.h"
#include "memfit/suggest.h"

#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <random>

#include "memfit/catalog.h"
#include "memfit/hub.h"
#include "memfit/local_source.h"
#include "request/shared_cache.h"

namespace memfit {
namespace {

// Whether `name` starts with `base` (case-insensitive) followed by '-': "Qwen2.5-7B-Instruct"
// extends "Qwen2.5-7B".
bool Extends(std::string_view name, std::string_view base) {
  if (name.size() <= base.size() || name[base.size()] != '-') return false;
  for (size_t i = 0; i < base.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(name[i])) !=
        std::tolower(static_cast<unsigned char>(base[i]))) {
      return false;
    }
  }
  return true;
}

// " (did you mean meta-llama/Llama-3.1-8B?)": the catalog's closest Hub id or short name to a
// model that was not found (a misspelled id), or "". A variant of a catalog model (an -Instruct,
// -Chat or quantized release: "Qwen/Qwen2.5-7B-Instruct") names the model it extends, the
// longest such id, before any edit-distance guess (which would pick "Qwen/Qwen3-VL-2B-Instruct").
std::string CatalogHint(std::string_view spec) {
  std::vector<std::string> ids, names;
  for (const CatalogEntry& e : Catalog()) {
    ids.emplace_back(e.id);
    const size_t slash = e.id.find('/');
    names.emplace_back(slash == std::string_view::npos ? e.id : e.id.substr(slash + 1));
  }
  const size_t spec_slash = spec.find('/');
  const std::string_view spec_name =
      spec_slash == std::string_view::npos ? spec : spec.substr(spec_slash + 1);
  std::string extended;
  for (size_t i = 0; i < ids.size(); ++i) {
    const bool extends = spec_slash == std::string_view::npos ? Extends(spec_name, names[i])
                                                              : Extends(spec, ids[i]);
    if (extends && ids[i].size() > extended.size()) extended = ids[i];
  }
  if (!extended.empty()) {
    return " (did you mean " + extended + "? it is in memfit's catalog, and this name extends it: "
           "a fine-tuned variant has its architecture, a quantized one does not)";
  }
  std::string match = ClosestMatch(spec, ids);
  if (match.empty()) {
    const size_t slash = spec.find('/');
    const std::string short_name(slash == std::string_view::npos ? spec : spec.substr(slash + 1));
    const std::string name = ClosestMatch(short_name, names);
    for (size_t i = 0; i < names.size() && !name.empty(); ++i) {
      if (names[i] == name) match = ids[i];
    }
  }
  if (match.empty() || match == spec) return "";
  return " (did you mean " + match + "? it is in memfit's catalog)";
}


namespace fs = std::filesystem;
using Clock = Validity::Clock;

// A resolved model and how long that answer holds.
struct Resolution {
  ResolvedModel model;
  Validity validity;
};

// What a kept answer costs against ModelCacheOptions::max_tensors: its tensors (a Tensor, with its
// name and shape, is about 300 bytes), a GGUF header's metadata (its vocabulary) as one per 256
// bytes.
uint64_t CostOf(const ModelInputs& inputs) {
  uint64_t cost = 1;
  for (const auto& [name, header] : inputs.safetensors) cost += header.tensors.size();
  for (const GgufShard& shard : inputs.gguf) {
    cost += shard.file.tensors.size() + shard.file.header_bytes / 256;
  }
  return cost;
}

// The files a local model was read from: the path itself, and a directory's entries (a file added,
// removed or rewritten changes a stamp); a single file's directory too (split GGUF shards).
std::vector<FileStamp> LocalStamps(const std::string& spec, InputKind kind) {
  std::vector<FileStamp> stamps = {StampFile(spec)};
  std::error_code ec;
  if (kind == InputKind::kDirectory) {
    for (const auto& entry : fs::directory_iterator(spec, ec)) {
      stamps.push_back(StampFile(entry.path().string()));
    }
  } else if (kind == InputKind::kFile) {
    const std::string parent = fs::path(spec).parent_path().string();
    stamps.push_back(StampFile(parent.empty() ? "." : parent));
  }
  return stamps;
}

Result<Resolution> ResolveWithValidity(const ModelQuery& query, uint32_t ttl_ms) {
  const Clock::time_point expires_at = Clock::now() + std::chrono::milliseconds(ttl_ms);
  LocalResolveOptions options{.revision = query.revision, .hf_hub_cache = DefaultHfHubCache()};
  // Hub ids and URLs that are not local paths go to the Hub client (short names without a slash
  // try the catalog first).
  std::error_code ec;
  if (!fs::exists(query.spec, ec) &&
      (LooksLikeHubUrl(query.spec) ||
       (LooksLikeHubId(query.spec) &&
        (query.spec.find('/') != std::string::npos || !FindCatalogEntry(query.spec))))) {
    auto hub = ResolveHubQuery(query, options.hf_hub_cache);
    if (!hub) {
      Error error = hub.error();
      if (error.kind == ErrorKind::kNotFound || error.kind == ErrorKind::kUnavailable) {
        error.message += CatalogHint(query.spec);
      }
      return error;
    }
    return Resolution{.model = std::move(*hub), .validity = {.expires_at = expires_at, .files = {}}};
  }
  MEMFIT_ASSIGN_OR_RETURN(LocalResolution local, ResolveLocalModel(query.spec, options));
  if (local.kind != InputKind::kNotFound) {
    Resolution out{.model = {.inputs = std::move(local.inputs)}, .validity = {}};
    if (local.kind == InputKind::kCatalog) {
      // Compiled in: it changes only if a file of that name appears (a path wins).
      out.validity.files = {StampFile(query.spec)};
    } else {
      out.validity.expires_at = expires_at;
      if (local.kind != InputKind::kHfCache) out.validity.files = LocalStamps(query.spec, local.kind);
    }
    return out;
  }
  return WithKind(
      MakeError("{}: model not found. memfit looked for (1) a local directory with config.json or "
                "safetensors files, (2) a .safetensors or config.json file, (3) a Hub id in the "
                "local Hugging Face cache ({}), (4) a name in the built-in catalog (`memfit models`){}",
                query.spec, options.hf_hub_cache, CatalogHint(query.spec)),
      ErrorKind::kNotFound);
}

// A token in a key: two salted 64-bit hashes (the salts are per process), never the token.
std::string TokenHash(const std::string& token) {
  if (token.empty()) return "-";
  static const auto salts = [] {
    std::random_device random;
    return std::pair<std::string, std::string>(std::to_string(random()) + std::to_string(random()),
                                                std::to_string(random()) + std::to_string(random()));
  }();
  const std::hash<std::string> hash;
  return fmt::format("{:016x}{:016x}", hash(salts.first + token), hash(token + salts.second));
}

// Everything that changes a resolution's answer.
std::string ResolutionKey(const ModelQuery& query) {
  const HubSettings hub = HubSettingsFromEnvironment(query.token, query.offline);
  std::error_code ec;
  const std::string cwd = fs::current_path(ec).string();
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", query.spec,
                     query.revision, query.gguf_file, hub.offline ? 1 : 0, TokenHash(hub.token),
                     hub.endpoint, hub.hub_cache, hub.memfit_cache, hub.deadline_ms, cwd);
}

// A new field of DescribeOptions or BuildOptions changes the model built: add it to the key below,
// then update these sizes (64-bit hosts; the wasm32 engine's layout differs and is not checked).
static_assert(sizeof(void*) != 8 || (sizeof(BuildOptions) == 64 && sizeof(DescribeOptions) == 72),
              "a new DescribeOptions/BuildOptions field must join DescribeKey");
std::string DescribeKey(const DescribeOptions& options) {
  return fmt::format("{}\x1f{}.{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}",
                     static_cast<int>(options.build.buffers), options.build.transformers.major,
                     options.build.transformers.minor, options.build.head_class,
                     options.build.ignore_quantization ? 1 : 0,
                     options.build.max_tensors, options.prefer_config ? 1 : 0,
                     options.build.compact_repeats ? 1 : 0);
}

struct ModelCache {
  SharedCache<Resolution> resolved;
  SharedCache<DescribedModel> described;
  std::atomic<bool> on{false};
  std::atomic<uint32_t> ttl_ms{10'000};
};

ModelCache& TheModelCache() {
  static ModelCache cache;
  return cache;
}

Result<std::shared_ptr<const Resolution>> ResolveKept(const ModelQuery& query) {
  ModelCache& cache = TheModelCache();
  const uint32_t ttl_ms = cache.ttl_ms.load();
  return cache.resolved.Get(ResolutionKey(query),
                            [&]() -> Result<SharedCache<Resolution>::Computed> {
                              MEMFIT_ASSIGN_OR_RETURN(Resolution r, ResolveWithValidity(query, ttl_ms));
                              Validity validity = r.validity;
                              const uint64_t cost = CostOf(r.model.inputs);
                              return SharedCache<Resolution>::Computed{
                                  std::make_shared<const Resolution>(std::move(r)),
                                  std::move(validity), cost};
                            });
}

}  // namespace

Result<ResolvedModel> ResolveModel(const ModelQuery& query) {
  if (!TheModelCache().on.load()) {
    MEMFIT_ASSIGN_OR_RETURN(Resolution r, ResolveWithValidity(query, 0));
    return std::move(r.model);
  }
  MEMFIT_ASSIGN_OR_RETURN(std::shared_ptr<const Resolution> kept, ResolveKept(query));
  return kept->model;
}

Result<std::shared_ptr<const ResolvedModel>> ResolveModelShared(const ModelQuery& query) {
  if (!TheModelCache().on.load()) {
    MEMFIT_ASSIGN_OR_RETURN(Resolution r, ResolveWithValidity(query, 0));
    return std::make_shared<const ResolvedModel>(std::move(r.model));
  }
  MEMFIT_ASSIGN_OR_RETURN(std::shared_ptr<const Resolution> kept, ResolveKept(query));
  return std::shared_ptr<const ResolvedModel>(kept, &kept->model);
}

Result<Model> ResolveAndDescribe(const ModelQuery& query, const DescribeOptions& options) {
  if (!TheModelCache().on.load()) {
    MEMFIT_ASSIGN_OR_RETURN(ResolvedModel resolved, ResolveModel(query));
    return DescribeModel(resolved.inputs, options);
  }
  MEMFIT_ASSIGN_OR_RETURN(std::shared_ptr<const DescribedModel> kept,
                          ResolveAndDescribeShared(query, options));
  return kept->model();
}

const BlockAssignment& DescribedModel::ResidentBlocks() const {
  std::call_once(blocks_once_, [this] { blocks_ = AssignBlocks(model_, TensorFilter{}); });
  return blocks_;
}

const LoadSummary& DescribedModel::ResidentLoadSummary() const {
  std::call_once(summary_once_, [this] { summary_ = SummarizeLoad(model_, ResidentBlocks()); });
  return summary_;
}

Result<std::shared_ptr<const DescribedModel>> ResolveAndDescribeShared(
    const ModelQuery& query, const DescribeOptions& options) {
  ModelCache& cache = TheModelCache();
  if (!cache.on.load()) {
    MEMFIT_ASSIGN_OR_RETURN(ResolvedModel resolved, ResolveModel(query));
    MEMFIT_ASSIGN_OR_RETURN(Model model, DescribeModel(resolved.inputs, options));
    return std::make_shared<const DescribedModel>(std::move(model));
  }
  const std::string key = ResolutionKey(query) + "\x1e" + DescribeKey(options);
  return cache.described.Get(key, [&]() -> Result<SharedCache<DescribedModel>::Computed> {
    MEMFIT_ASSIGN_OR_RETURN(std::shared_ptr<const Resolution> kept, ResolveKept(query));
    MEMFIT_ASSIGN_OR_RETURN(Model model, DescribeModel(kept->model.inputs, options));
    // As long as the resolution it was built from.
    const uint64_t cost = 1 + model.tensors.size();
    return SharedCache<DescribedModel>::Computed{
        std::make_shared<const DescribedModel>(std::move(model)), kept->validity, cost};
  });
}

Result<std::shared_ptr<const DescribedModel>> DescribeResolvedShared(
    const ModelQuery& query, const ResolvedModel& resolved, const DescribeOptions& options) {
  if (TheModelCache().on.load()) return ResolveAndDescribeShared(query, options);
  MEMFIT_ASSIGN_OR_RETURN(Model model, DescribeModel(resolved.inputs, options));
  return std::make_shared<const DescribedModel>(std::move(model));
}

void ConfigureModelCache(const ModelCacheOptions& options) {
  ModelCache& cache = TheModelCache();
  cache.ttl_ms = options.hub_ttl_ms;
  // Resolutions of catalog models cost little (a config); the tensor budget is shared evenly.
  const SharedCache<DescribedModel>::Limits limits{.max_entries = options.max_entries,
                                          .max_cost = options.max_tensors / 2};
  cache.resolved.SetLimits({.max_entries = limits.max_entries, .max_cost = limits.max_cost});
  cache.described.SetLimits(limits);
  cache.on = options.max_entries > 0;
}

void ClearModelCache() {
  TheModelCache().resolved.Clear();
  TheModelCache().described.Clear();
}

}  // namespace memfit
