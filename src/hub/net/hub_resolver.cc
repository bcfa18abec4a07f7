// ResolveHubModel: the cache written by an earlier run first (no network), then the Hub's API
// (model info -> commit, tree -> files), small JSON files, and the weight headers in parallel.

#include <chrono>
#include <map>
#include <mutex>

#include "hub/net/file_choice.h"
#include "hub/net/hub_api.h"
#include "hub/net/hub_cache.h"
#include "hub/net/hub_file_source.h"
#include "hub/net/http_client.h"
#include "hub/net/parallel.h"
#include "memfit/hub.h"
#include "memfit/json.h"
#include "memfit/local_source.h"
#include "memfit/units.h"

namespace memfit {
namespace {
using hubnet::ErrorContext;
using hubnet::HttpClient;
using hubnet::HttpRequest;
using hubnet::RepoFile;

constexpr uint64_t kMaxJsonBytes = 64ull << 20;  // config.json, indexes (DeepSeek-V3's is ~9 MB)
using hubnet::kMaxApiBytes;
constexpr int kMaxTreePages = 1000;

struct Session {
  const HubRef& ref;
  std::string revision;
  std::string commit = {};
  const HubSettings& settings;
  HubStats& stats;
  hubnet::HubCache cache;
  bool online = false;
  const HubResolveOptions& options;
  std::map<std::string, RepoFile> files = {};  // by path

  std::string ResolveUrl(std::string_view path) const {
    return fmt::format("{}/{}/resolve/{}/{}", settings.endpoint, ref.repo_id,
                       PercentEncodeSegment(commit), PercentEncodePath(path));
  }
  ErrorContext Context(std::string file) const { return {ref.repo_id, revision, std::move(file)}; }
};

// A small file: the HF snapshot, else (online) the Hub. nullopt when offline and absent.
Result<std::optional<std::string>> SmallFile(Session& s, const std::string& path, HttpClient* client) {
  if (auto cached = s.cache.ReadSnapshotFile(s.ref.repo_id, s.commit, path, kMaxJsonBytes)) {
    return std::optional<std::string>(std::move(*cached));
  }
  if (!s.online) return std::optional<std::string>();
  HttpRequest request{.url = s.ResolveUrl(path), .max_body_bytes = kMaxJsonBytes,
                      .timeout_ms = s.settings.metadata_timeout_ms};
  MEMFIT_ASSIGN_OR_RETURN(auto response, client->Get(request, s.Context(path)));
  s.cache.WriteSnapshotFile(s.ref.repo_id, s.commit, s.files.at(path), response.body);
  return std::optional<std::string>(std::move(response.body));
}

// A safetensors header over the network: one range for the first bytes (most headers fit),
// a second for the rest when the header is longer.
Result<SafetensorsHeader> FetchHeader(Session& s, const RepoFile& file, HttpClient& client) {
  hubnet::HubFileSource source(&client, s.settings, s.stats, s.ResolveUrl(file.path),
                               s.Context(file.path), file.size);
  const std::string name = source.Name();
  if (file.size < 8) {
    return MakeError("{}: {} bytes is too small for a safetensors file", name, file.size);
  }
  MEMFIT_ASSIGN_OR_RETURN(std::string prefix,
                          source.Read(0, static_cast<size_t>(std::min(file.size, s.settings.first_read_bytes))));
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{static_cast<unsigned char>(prefix[i])} << (8 * i);
  const SafetensorsLimits limits;
  if (n > limits.max_header_bytes) {
    return MakeError("{}: safetensors header length {} exceeds the cap of {} bytes", name, n,
                     limits.max_header_bytes);
  }
  if (n <= file.size - 8 && 8 + n > prefix.size()) {
    MEMFIT_ASSIGN_OR_RETURN(std::string rest,
                            source.Read(prefix.size(), static_cast<size_t>(8 + n - prefix.size())));
    prefix += rest;
  }
  hubnet::PrefixByteSource known(std::move(prefix), file.size, name);
  return ReadSafetensorsHeader(known);
}

// A header from a local full file, the header cache, or (online) the Hub; nullopt if missing.
Result<std::optional<SafetensorsHeader>> Header(Session& s, const RepoFile& file,
                                                const std::function<HttpClient&()>& client) {
  if (auto local = s.cache.FullSnapshotFile(s.ref.repo_id, s.commit, file.path, file.size)) {
    auto source = OpenFileByteSource(*local);
    MEMFIT_ASSIGN_OR_RETURN(auto header, ReadSafetensorsHeader(*source));
    s.stats.headers_cached++;
    return std::optional<SafetensorsHeader>(std::move(header));
  }
  if (auto cached = s.cache.ReadHeader(file.etag);
      cached && 8 + cached->header_bytes + cached->data_bytes == file.size) {
    s.stats.headers_cached++;
    return std::optional<SafetensorsHeader>(std::move(*cached));
  }
  if (!s.online) return std::optional<SafetensorsHeader>();
  MEMFIT_ASSIGN_OR_RETURN(auto header, FetchHeader(s, file, client()));
  s.cache.WriteHeader(file.etag, header);
  s.stats.headers_fetched++;
  return std::optional<SafetensorsHeader>(std::move(header));
}

// Builds the resolution from s.files. Returns nullopt (with `missing` set) when offline and
// something is not cached.
Result<std::optional<HubResolution>> Assemble(Session& s, std::string& missing) {
  std::vector<RepoFile> list;
  for (const auto& [path, f] : s.files) list.push_back(f);
  std::string gguf_choice = s.options.gguf_file;
  if (gguf_choice.empty() && s.ref.file.ends_with(".gguf")) gguf_choice = s.ref.file;
  std::map<std::string, std::string> json;  // path -> text
  std::map<std::string, WeightIndex> indexes;  // parsed, from the cache or the text
  auto is_index = [](const std::string& p) { return p.ends_with(".index.json"); };
  hubnet::FilePlan plan;
  // Up to two rounds: model_index.json / modules.json decide which other files are needed.
  for (int round = 0; round < 2; ++round) {
    MEMFIT_ASSIGN_OR_RETURN(plan, hubnet::PlanFiles(s.ref.repo_id, list, gguf_choice,
                                                    json.count("model_index.json") ? json["model_index.json"] : "",
                                                    json.count("modules.json") ? json["modules.json"] : ""));
    std::vector<std::string> needed;
    for (const auto& p : plan.json_files) {
      if (json.count(p) || indexes.count(p)) continue;
      if (is_index(p)) {
        if (auto cached = s.cache.ReadIndex(s.files.at(p).etag)) {
          indexes.emplace(p, std::move(*cached));
          continue;
        }
      }
      needed.push_back(p);
    }
    if (needed.empty()) continue;
    std::vector<std::optional<std::string>> texts(needed.size());
    std::vector<std::optional<WeightIndex>> parsed(needed.size());
    MEMFIT_RETURN_IF_ERROR(hubnet::ParallelFor(
        needed.size(), s.settings.max_concurrency, s.settings, s.stats,
        [&](size_t i, const std::function<HttpClient&()>& client) -> Status {
          MEMFIT_ASSIGN_OR_RETURN(texts[i], SmallFile(s, needed[i], s.online ? &client() : nullptr));
          if (texts[i] && is_index(needed[i])) {
            MEMFIT_ASSIGN_OR_RETURN(parsed[i], ParseWeightIndex(*texts[i], s.ref.repo_id + "/" + needed[i]));
            s.cache.WriteIndex(s.files.at(needed[i]).etag, *parsed[i]);
          }
          return Ok{};
        }));
    for (size_t i = 0; i < needed.size(); ++i) {
      if (!texts[i]) {
        missing = needed[i];
        return std::optional<HubResolution>();
      }
      if (parsed[i]) {
        indexes.emplace(needed[i], std::move(*parsed[i]));
      } else {
        json[needed[i]] = std::move(*texts[i]);
      }
    }
  }
  HubResolution out;
  out.commit = s.commit;
  out.layout = plan.layout;
  out.gguf_files = plan.gguf_files;
  ModelInputs& inputs = out.inputs;
  inputs.name = s.ref.repo_id;
  inputs.location = s.settings.endpoint + "/" + s.ref.repo_id;
  inputs.assumptions.push_back(fmt::format("Hub revision {} is commit {}", s.revision, s.commit));
  for (auto& a : plan.assumptions) inputs.assumptions.push_back(std::move(a));
  if (!plan.config_path.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(inputs.config, HfConfig::Parse(json[plan.config_path],
                                                           s.ref.repo_id + "/" + plan.config_path));
  }
  if (plan.layout == "gguf") {
    const RepoFile& f = s.files.at(plan.gguf_file);
    out.gguf_file = plan.gguf_file;
    if (auto local = s.cache.FullSnapshotFile(s.ref.repo_id, s.commit, f.path, f.size)) {
      out.gguf_source = OpenFileByteSource(*local);
    } else if (s.online) {
      out.gguf_source = std::make_unique<hubnet::HubFileSource>(
          nullptr, s.settings, s.stats, s.ResolveUrl(f.path), s.Context(f.path), f.size);
    } else {
      missing = f.path;
      return std::optional<HubResolution>();
    }
    return std::optional<HubResolution>(std::move(out));
  }
  // Weight files, with the tensor-name prefix of their component (diffusers, sentence-transformers).
  std::vector<std::pair<std::string, std::string>> weights;  // path, prefix
  for (const auto& g : plan.groups) {
    std::string prefix = g.folder.empty() ? "" : g.folder.substr(0, g.folder.size() - 1) + ".";
    std::vector<std::string> paths = g.files;
    if (!g.index_path.empty()) {
      const WeightIndex& index = indexes.at(g.index_path);
      for (const auto& shard : index.shards) {
        std::string path = g.folder + shard;
        if (!s.files.count(path)) {
          return MakeError("{}: {} lists {}, which is not in the repository", s.ref.repo_id,
                           g.index_path, path);
        }
        paths.push_back(path);
      }
      if (g.index_path == plan.root_index_path) {
        inputs.index = index;
        inputs.index_name = g.index_path;
      }
    }
    for (auto& p : paths) weights.emplace_back(std::move(p), prefix);
  }
  if (plan.groups.empty() && !plan.root_index_path.empty()) {
    inputs.index = indexes.at(plan.root_index_path);
    inputs.index_name = plan.root_index_path;
    inputs.assumptions.push_back(
        "no shard files present: tensor sizes come from config.json, checked against the "
        "index's total_size");
  }
  std::vector<std::optional<SafetensorsHeader>> headers(weights.size());
  std::mutex progress_mutex;
  std::atomic<size_t> done{0};
  MEMFIT_RETURN_IF_ERROR(hubnet::ParallelFor(
      weights.size(), s.settings.max_concurrency, s.settings, s.stats,
      [&](size_t i, const std::function<HttpClient&()>& client) -> Status {
        MEMFIT_ASSIGN_OR_RETURN(headers[i], Header(s, s.files.at(weights[i].first), client));
        if (s.options.progress) {
          std::lock_guard lock(progress_mutex);
          s.options.progress(++done, weights.size());
        }
        return Ok{};
      }));
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!headers[i]) {
      missing = weights[i].first;
      return std::optional<HubResolution>();
    }
    if (!weights[i].second.empty()) {
      for (auto& t : headers[i]->tensors) t.name = weights[i].second + t.name;
    }
    inputs.safetensors.emplace_back(weights[i].first, std::move(*headers[i]));
  }
  if (!inputs.config && inputs.safetensors.empty()) {
    return MakeError("{}: nothing usable at revision {}: no config.json and no safetensors weights",
                     s.ref.repo_id, s.revision);
  }
  return std::optional<HubResolution>(std::move(out));
}

Status FetchCommitAndTree(Session& s, HttpClient& client, HubFailure* failure) {
  const std::string info_url = fmt::format("{}/api/models/{}/revision/{}", s.settings.endpoint,
                                           s.ref.repo_id, PercentEncodeSegment(s.revision));
  HttpRequest info_request{.url = info_url, .max_body_bytes = kMaxApiBytes,
                           .timeout_ms = s.settings.metadata_timeout_ms};
  MEMFIT_ASSIGN_OR_RETURN(auto info, client.Get(info_request, s.Context(""), failure));
  if (failure) *failure = HubFailure::kOther;
  MEMFIT_ASSIGN_OR_RETURN(s.commit, hubnet::ParseModelInfoSha(info.body, info_url));
  std::string url = fmt::format("{}/api/models/{}/tree/{}?recursive=true", s.settings.endpoint,
                                s.ref.repo_id, s.commit);
  std::vector<RepoFile> all;
  for (int page = 0; !url.empty(); ++page) {
    if (page >= kMaxTreePages) return MakeError("{}: more than {} pages of files", url, kMaxTreePages);
    HttpRequest request{.url = url, .max_body_bytes = kMaxApiBytes,
                        .timeout_ms = s.settings.metadata_timeout_ms};
    MEMFIT_ASSIGN_OR_RETURN(auto response, client.Get(request, s.Context("")));
    MEMFIT_ASSIGN_OR_RETURN(auto files, hubnet::ParseTreePage(response.body, hubnet::RedactUrl(url)));
    for (auto& f : files) all.push_back(std::move(f));
    url = hubnet::NextPageLink(response.headers["link"]);
  }
  s.cache.WriteTree(s.ref.repo_id, s.commit, all);
  s.cache.WriteRef(s.ref.repo_id, s.revision, s.commit);
  s.files.clear();
  for (auto& f : all) s.files[f.path] = std::move(f);
  return Ok{};
}

}  // namespace

Result<HubResolution> ResolveHubModel(const HubRef& ref, const HubResolveOptions& options,
                                      const HubSettings& settings, HubStats& stats,
                                      HubFailure* failure) {
  if (failure) *failure = HubFailure::kOther;
  std::string revision = options.revision.empty() ? "main" : options.revision;
  if (!ref.revision.empty()) {
    if (revision != "main" && revision != ref.revision) {
      return MakeError("{}: the URL names revision \"{}\" but --revision is \"{}\"", ref.repo_id,
                       ref.revision, revision);
    }
    revision = ref.revision;
  }
  MEMFIT_RETURN_IF_ERROR(ValidateRevision(revision));
  if (!ref.file.empty() && !ref.file.ends_with(".gguf")) {
    return MakeError("{}: a URL of the file {}; pass the repository URL (file URLs are accepted "
                     "for .gguf files)", ref.repo_id, ref.file);
  }
  Session s{.ref = ref, .revision = revision, .settings = settings, .stats = stats,
            .cache = hubnet::HubCache(settings.hub_cache, settings.memfit_cache), .options = options};
  // 1. What an earlier run cached: no network at all.
  std::string missing = "the file list";
  if (auto commit = s.cache.ReadRef(ref.repo_id, revision)) {
    s.commit = *commit;
    if (auto tree = s.cache.ReadTree(ref.repo_id, s.commit)) {
      for (auto& f : *tree) s.files[f.path] = std::move(f);
      MEMFIT_ASSIGN_OR_RETURN(auto cached, Assemble(s, missing));
      if (cached) {
        cached->from_cache = true;
        if (failure) *failure = HubFailure::kNone;
        return std::move(*cached);
      }
    }
  }
  // 2. A Hugging Face cache snapshot that holds the weights (downloaded by huggingface_hub).
  if (ref.file.empty() && options.gguf_file.empty()) {
    LocalResolveOptions local_options{.revision = revision, .hf_hub_cache = settings.hub_cache,
                                      .use_catalog = false};
    auto local = ResolveLocalModel(ref.repo_id, local_options);
    if (local && local->kind == InputKind::kHfCache && !local->inputs.safetensors.empty()) {
      HubResolution out;
      out.inputs = std::move(local->inputs);
      out.from_cache = true;
      out.layout = "transformers";
      if (failure) *failure = HubFailure::kNone;
      return out;
    }
  }
  if (settings.offline) {
    if (failure) *failure = HubFailure::kNotCached;
    return MakeError("{}: offline (--offline or HF_HUB_OFFLINE) and revision {} is not in the cache "
                     "({} missing; run once online to cache it)",
                     ref.repo_id, revision, missing);
  }
  // 3. The Hub.
  s.online = true;
  HttpClient client(settings, stats);
  MEMFIT_RETURN_IF_ERROR(FetchCommitAndTree(s, client, failure));
  if (failure) *failure = HubFailure::kOther;
  MEMFIT_ASSIGN_OR_RETURN(auto fetched, Assemble(s, missing));
  if (!fetched) return MakeError("{}: {} could not be read", ref.repo_id, missing);
  if (failure) *failure = HubFailure::kNone;
  return std::move(*fetched);
}

std::string FormatHubSummary(const HubStats& stats, double seconds) {
  return fmt::format("hub: {} requests ({} retries), {} received, {} weight headers fetched, {} "
                     "from cache, {:.2f} s",
                     stats.requests.load(), stats.retries.load(), FormatBytes(stats.bytes.load()),
                     stats.headers_fetched.load(), stats.headers_cached.load(), seconds);
}

}  // namespace memfit
