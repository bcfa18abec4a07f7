// ResolveHubModel: the cache written by an earlier run first (no network), then the Hub's API
// (model info -> commit, tree -> files), then the small JSON files and the weight headers, all in
// one bounded pool of workers.

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include "hub/net/file_choice.h"
#include "hub/net/gguf_headers.h"
#include "hub/net/http_client.h"
#include "hub/net/hub_api.h"
#include "hub/net/hub_cache.h"
#include "hub/net/hub_guard.h"
#include "hub/net/hub_session.h"
#include "hub/net/parallel.h"
#include "hub/net/weight_headers.h"
#include "memfit/hf_quant_config.h"
#include "memfit/hub.h"
#include "formats/json.h"
#include "memfit/local_source.h"
#include "memfit/units.h"

namespace memfit {
namespace {
using hubnet::ClientFactory;
using hubnet::HttpClient;
using hubnet::HttpRequest;
using hubnet::HubSession;
using hubnet::kMaxApiBytes;
using hubnet::RepoFile;

constexpr int kMaxTreePages = 1000;

bool IsIndex(const std::string& path) { return path.ends_with(".index.json"); }

// Worker threads: network reads wait on the server, cache reads on the CPU.
uint32_t Workers(const HubSession& s) {
  if (s.online) return s.settings.max_concurrency;
  return std::clamp<uint32_t>(std::thread::hardware_concurrency(), 1,
                              std::max<uint32_t>(1, s.settings.max_concurrency));
}

HubResolution Start(const HubSession& s, const hubnet::FilePlan& plan) {
  HubResolution out;
  out.commit = s.commit;
  out.layout = plan.layout;
  out.gguf_files = plan.gguf_files;
  out.gguf_file = plan.gguf_file;
  ModelInputs& inputs = out.inputs;
  inputs.name = s.ref.repo_id;
  inputs.location = s.settings.endpoint + "/" + s.ref.repo_id;
  inputs.assumptions.push_back(fmt::format("Hub revision {} is commit {}", s.revision, s.commit));
  for (const auto& a : plan.assumptions) inputs.assumptions.push_back(a);
  return out;
}

// Layout "gguf": the chosen model's files (one, or every file of a split), headers in parallel.
Result<std::optional<HubResolution>> AssembleGguf(HubSession& s, const hubnet::FilePlan& plan,
                                                  std::string& missing) {
  HubResolution out = Start(s, plan);
  std::vector<std::optional<GgufFile>> files(plan.gguf_paths.size());
  std::mutex progress_mutex;
  size_t done = 0;
  MEMFIT_RETURN_IF_ERROR(hubnet::ParallelFor(
      files.size(), Workers(s), s.settings, s.stats,
      [&](size_t i, const ClientFactory& client) -> Status {
        MEMFIT_ASSIGN_OR_RETURN(files[i],
                                hubnet::ReadGgufFromHub(s, s.files.at(plan.gguf_paths[i]), client));
        if (s.options.progress) {
          std::lock_guard lock(progress_mutex);
          s.options.progress(++done, files.size());
        }
        return Ok{};
      }));
  for (size_t i = 0; i < files.size(); ++i) {
    if (!files[i]) {
      missing = plan.gguf_paths[i];
      return std::optional<HubResolution>();
    }
    out.inputs.gguf.push_back({plan.gguf_paths[i], std::move(*files[i])});
  }
  return std::optional<HubResolution>(std::move(out));
}

// Builds the resolution from s.files: the file plan, then the small files and every weight header
// in one pool of workers. An index's shards are fetched with it, guessed from the file list
// (WeightGroup::likely_shards); once the index is read, the shards it lists that were not guessed
// are fetched, and a guessed header the index does not list is dropped. Returns nullopt (with
// `missing` set) when offline and something is not cached. `client`: the caller's (online).
// The file plan of s.files. model_index.json / modules.json decide which other files are needed,
// so they are fetched first. Returns nullopt (with `missing` set) when offline and one of them is
// not cached.
Result<std::optional<hubnet::FilePlan>> PlanRepoFiles(HubSession& s, HttpClient* client,
                                                      std::string& missing) {
  std::vector<RepoFile> list;
  for (const auto& [path, f] : s.files) list.push_back(f);
  std::string gguf_choice = s.options.gguf_file;
  if (gguf_choice.empty() && s.ref.file.ends_with(".gguf")) gguf_choice = s.ref.file;
  std::map<std::string, std::string> layout_files;
  while (true) {
    MEMFIT_ASSIGN_OR_RETURN(auto plan, hubnet::PlanFiles(s.ref.repo_id, list, gguf_choice,
                                                         layout_files["model_index.json"],
                                                         layout_files["modules.json"]));
    if (plan.pending_file.empty()) return std::optional<hubnet::FilePlan>(std::move(plan));
    const std::string pending = plan.pending_file;
    if (!layout_files[pending].empty()) {
      return MakeError("{}: {} cannot be used", s.ref.repo_id, pending);
    }
    MEMFIT_ASSIGN_OR_RETURN(auto text, hubnet::ReadSmallFile(s, pending, client));
    if (!text) {
      missing = pending;
      return std::optional<hubnet::FilePlan>();
    }
    if (text->empty()) return MakeError("{}: {} is empty", s.ref.repo_id, pending);
    layout_files[pending] = std::move(*text);
  }
}

// The plan's config.json (with ModelOpt's quantization file beside it) and root index, from the
// small files read (text_by_path, index_by_path: every path the plan names).
Status AddConfigAndIndex(HubSession& s, const hubnet::FilePlan& plan,
                         const std::map<std::string, const std::string*>& text_by_path,
                         const std::map<std::string, WeightIndex*>& index_by_path,
                         ModelInputs& inputs) {
  if (!plan.config_path.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(inputs.config, HfConfig::Parse(*text_by_path.at(plan.config_path),
                                                           s.ref.repo_id + "/" + plan.config_path));
    if (!plan.quant_config_path.empty()) {  // ModelOpt's quantization, beside config.json
      MEMFIT_ASSIGN_OR_RETURN(
          inputs.config,
          MergeHfQuantConfig(*inputs.config, *text_by_path.at(plan.quant_config_path),
                             s.ref.repo_id + "/" + plan.quant_config_path));
    }
  }
  if (!plan.root_index_path.empty()) {
    inputs.index = std::move(*index_by_path.at(plan.root_index_path));
    inputs.index_name = plan.root_index_path;
    if (plan.groups.empty()) {
      inputs.assumptions.push_back(
          "no shard files present: tensor sizes come from config.json, checked against the "
          "index's total_size");
    }
  }
  return Ok{};
}

Result<std::optional<HubResolution>> Assemble(HubSession& s, HttpClient* client,
                                              std::string& missing) {
  MEMFIT_ASSIGN_OR_RETURN(auto planned, PlanRepoFiles(s, client, missing));
  if (!planned) return std::optional<HubResolution>();
  const hubnet::FilePlan& plan = *planned;
  if (plan.layout == "gguf") return AssembleGguf(s, plan, missing);

  // The weight headers the file list names (files, and the guessed shards of indexes).
  struct HeaderTask {
    std::string path;
    std::string prefix;  // "unet." for tensors of a component folder
    bool guessed = false;
  };
  std::vector<HeaderTask> tasks;
  std::map<std::string, size_t> task_of;  // path -> index in tasks
  auto add_task = [&](const std::string& path, const std::string& prefix, bool guessed) {
    if (task_of.emplace(path, tasks.size()).second) tasks.push_back({path, prefix, guessed});
  };
  auto prefix_of = [](const hubnet::WeightGroup& g) {
    return g.folder.empty() ? std::string() : g.folder.substr(0, g.folder.size() - 1) + ".";
  };
  for (const auto& g : plan.groups) {
    for (const auto& f : g.files) add_task(f, prefix_of(g), false);
    for (const auto& f : g.likely_shards) add_task(f, prefix_of(g), true);
  }
  const std::vector<std::string>& json_paths = plan.json_files;
  std::vector<std::optional<std::string>> texts(json_paths.size());
  std::vector<std::optional<WeightIndex>> indexes(json_paths.size());
  // Results of header tasks; a guessed header's error waits until the index says it matters.
  std::vector<std::optional<SafetensorsHeader>> headers(tasks.size());
  std::vector<std::optional<Error>> deferred(tasks.size());
  std::mutex progress_mutex;
  size_t done = 0, total = tasks.size();
  auto run_header = [&](size_t i, const ClientFactory& c) -> Status {
    auto header = hubnet::ReadWeightHeader(s, s.files.at(tasks[i].path), c);
    if (!header) {
      if (!tasks[i].guessed) return header.error();
      deferred[i] = header.error();
      return Ok{};
    }
    headers[i] = std::move(*header);
    if (s.options.progress) {
      std::lock_guard lock(progress_mutex);
      s.options.progress(++done, total);
    }
    return Ok{};
  };
  auto run_json = [&](size_t i, const ClientFactory& c) -> Status {
    const std::string& path = json_paths[i];
    if (IsIndex(path)) {
      if (auto cached = s.cache.ReadIndex(s.files.at(path).etag)) {
        indexes[i] = std::move(*cached);
        return Ok{};
      }
    }
    MEMFIT_ASSIGN_OR_RETURN(texts[i], hubnet::ReadSmallFile(s, path, s.online ? &c() : nullptr));
    if (texts[i] && IsIndex(path)) {
      MEMFIT_ASSIGN_OR_RETURN(indexes[i], ParseWeightIndex(*texts[i], s.ref.repo_id + "/" + path));
      s.cache.WriteIndex(s.files.at(path).etag, *indexes[i]);
    }
    return Ok{};
  };
  // Small files first: the index is the longest transfer.
  MEMFIT_RETURN_IF_ERROR(hubnet::ParallelFor(
      json_paths.size() + tasks.size(), Workers(s), s.settings, s.stats,
      [&](size_t i, const ClientFactory& c) -> Status {
        return i < json_paths.size() ? run_json(i, c) : run_header(i - json_paths.size(), c);
      }));
  std::map<std::string, WeightIndex*> index_by_path;
  std::map<std::string, const std::string*> text_by_path;
  for (size_t i = 0; i < json_paths.size(); ++i) {
    if (indexes[i]) {
      index_by_path[json_paths[i]] = &*indexes[i];
    } else if (texts[i]) {
      text_by_path[json_paths[i]] = &*texts[i];
    } else {
      missing = json_paths[i];
      return std::optional<HubResolution>();
    }
  }
  // The index decides: every shard it lists must exist; those not guessed are read now.
  std::vector<std::vector<std::string>> group_paths(plan.groups.size());
  const size_t first_late = tasks.size();
  for (size_t gi = 0; gi < plan.groups.size(); ++gi) {
    const hubnet::WeightGroup& g = plan.groups[gi];
    group_paths[gi] = g.files;
    if (g.index_path.empty()) continue;
    for (const auto& shard : index_by_path.at(g.index_path)->shards()) {
      std::string path = g.folder + shard;
      if (!s.files.count(path)) {
        return MakeError("{}: {} lists {}, which is not in the repository", s.ref.repo_id,
                         g.index_path, path);
      }
      add_task(path, prefix_of(g), false);
      group_paths[gi].push_back(std::move(path));
    }
  }
  if (tasks.size() > first_late) {
    headers.resize(tasks.size());
    deferred.resize(tasks.size());
    total += tasks.size() - first_late;
    MEMFIT_RETURN_IF_ERROR(hubnet::ParallelFor(
        tasks.size() - first_late, Workers(s), s.settings, s.stats,
        [&](size_t i, const ClientFactory& c) -> Status { return run_header(first_late + i, c); }));
  }

  HubResolution out = Start(s, plan);
  ModelInputs& inputs = out.inputs;
  MEMFIT_RETURN_IF_ERROR(AddConfigAndIndex(s, plan, text_by_path, index_by_path, inputs));
  for (size_t gi = 0; gi < plan.groups.size(); ++gi) {
    for (const auto& path : group_paths[gi]) {
      const size_t i = task_of.at(path);
      if (deferred[i]) return *deferred[i];
      if (!headers[i]) {
        missing = path;
        return std::optional<HubResolution>();
      }
      if (!tasks[i].prefix.empty()) {
        for (auto& t : headers[i]->tensors) t.name = tasks[i].prefix + t.name;
      }
      inputs.safetensors.emplace_back(path, std::move(*headers[i]));
    }
  }
  if (!inputs.config && inputs.safetensors.empty()) {
    return MakeError("{}: nothing usable at revision {}: no config.json and no safetensors weights",
                     s.ref.repo_id, s.revision);
  }
  return std::optional<HubResolution>(std::move(out));
}

Status FetchCommitAndTree(HubSession& s, HttpClient& client, HubFailure* failure) {
  const std::string info_url = fmt::format("{}/api/models/{}/revision/{}", s.settings.endpoint,
                                           s.ref.repo_id, PercentEncodeSegment(s.revision));
  HttpRequest info_request{.url = info_url,
                           .max_body_bytes = kMaxApiBytes,
                           .timeout_ms = s.settings.metadata_timeout_ms};
  MEMFIT_ASSIGN_OR_RETURN(auto info, client.Get(info_request, s.Context(""), failure));
  if (failure) *failure = HubFailure::kOther;
  MEMFIT_ASSIGN_OR_RETURN(s.commit, hubnet::ParseModelInfoSha(info.body, info_url));
  std::string url = fmt::format("{}/api/models/{}/tree/{}?recursive=true", s.settings.endpoint,
                                s.ref.repo_id, s.commit);
  std::vector<RepoFile> all;
  for (int page = 0; !url.empty(); ++page) {
    if (page >= kMaxTreePages)
      return MakeError("{}: more than {} pages of files", url, kMaxTreePages);
    HttpRequest request{
        .url = url, .max_body_bytes = kMaxApiBytes, .timeout_ms = s.settings.metadata_timeout_ms};
    MEMFIT_ASSIGN_OR_RETURN(auto response, client.Get(request, s.Context("")));
    MEMFIT_ASSIGN_OR_RETURN(auto files,
                            hubnet::ParseTreePage(response.body, hubnet::RedactUrl(url)));
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

Result<HubResolution> ResolveUnshared(const HubRef& ref, const HubResolveOptions& options,
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
    return MakeError(
        "{}: a URL of the file {}; pass the repository URL (file URLs are accepted "
        "for .gguf files)",
        ref.repo_id, ref.file);
  }
  HubSession s{.ref = ref,
               .revision = revision,
               .settings = settings,
               .stats = stats,
               .cache = hubnet::HubCache(settings.hub_cache, settings.memfit_cache),
               .options = options};
  // 1. What an earlier run cached: no network at all.
  std::string missing = "the file list";
  if (auto commit = s.cache.ReadRef(ref.repo_id, revision)) {
    s.commit = *commit;
    if (auto tree = s.cache.ReadTree(ref.repo_id, s.commit)) {
      for (auto& f : *tree) s.files[f.path] = std::move(f);
      MEMFIT_ASSIGN_OR_RETURN(auto cached, Assemble(s, nullptr, missing));
      if (cached) {
        cached->from_cache = true;
        if (failure) *failure = HubFailure::kNone;
        return std::move(*cached);
      }
    }
  }
  // 2. A Hugging Face cache snapshot that holds the weights (downloaded by huggingface_hub).
  if (ref.file.empty() && options.gguf_file.empty()) {
    LocalResolveOptions local_options{
        .revision = revision, .hf_hub_cache = settings.hub_cache, .use_catalog = false};
    auto local = ResolveLocalModel(ref.repo_id, local_options);
    if (local && local->kind == InputKind::kHfCache && !local->inputs.safetensors.empty()) {
      HubResolution out;
      out.commit = s.cache.ReadRef(ref.repo_id, revision).value_or("");
      stats.headers_cached += local->inputs.safetensors.size();
      out.inputs = std::move(local->inputs);
      out.from_cache = true;
      out.layout = "transformers";
      if (failure) *failure = HubFailure::kNone;
      return out;
    }
  }
  // 3. GGUF files downloaded into the Hugging Face cache (`huggingface-cli download REPO FILE`)
  // when no earlier memfit run cached the file list: the snapshot's .gguf files stand in for it.
  // Offline, or online when --gguf-file (or a file URL) names one of them; online with no choice
  // the Hub's list decides, since the snapshot holds only what was downloaded.
  if (auto commit = s.cache.ReadRef(ref.repo_id, revision)) {
    auto gguf = s.cache.SnapshotGgufFiles(ref.repo_id, *commit);
    const bool chosen = !options.gguf_file.empty() || ref.file.ends_with(".gguf");
    if (!gguf.empty() && (settings.offline || chosen)) {
      s.commit = *commit;
      s.files.clear();
      for (auto& f : gguf) s.files[f.path] = std::move(f);
      std::string snapshot_missing;
      auto local = Assemble(s, nullptr, snapshot_missing);
      if (!local && settings.offline) {
        return MakeError("{} (offline: only the {} .gguf files in the Hugging Face cache snapshot "
                         "{} were looked at)",
                         local.error().message, gguf.size(), s.commit.substr(0, 12));
      }
      if (local && *local) {
        (*local)->from_cache = true;
        (*local)->inputs.assumptions.push_back(
            "file list from the Hugging Face cache snapshot (the .gguf files downloaded there; the "
            "Hub may hold others)");
        if (failure) *failure = HubFailure::kNone;
        return std::move(**local);
      }
    }
  }
  if (settings.offline) {
    if (failure) *failure = HubFailure::kNotCached;
    return MakeError(
        "{}: offline (--offline or HF_HUB_OFFLINE) and revision {} is not in the cache "
        "({} missing; run once online to cache it)",
        ref.repo_id, revision, missing);
  }
  // 4. The Hub, unless it could not be reached a moment ago (HubGuard: one outage costs one
  // timeout, not one per lookup).
  if (settings.guard) {
    if (auto blocked = settings.guard->Blocked(settings.endpoint)) {
      if (failure) *failure = HubFailure::kUnreachable;
      return *blocked;
    }
  }
  s.online = true;
  HttpClient client(settings, stats);
  HubFailure reached = HubFailure::kOther;
  auto tree = FetchCommitAndTree(s, client, &reached);
  if (settings.guard) {
    if (!tree && reached == HubFailure::kUnreachable) {
      settings.guard->RecordOutage(settings.endpoint, tree.error());
    } else {
      settings.guard->RecordAnswer(settings.endpoint);
    }
  }
  if (!tree) {
    if (failure) *failure = reached;
    return tree.error();
  }
  if (failure) *failure = HubFailure::kOther;
  MEMFIT_ASSIGN_OR_RETURN(auto fetched, Assemble(s, &client, missing));
  if (!fetched) return MakeError("{}: {} could not be read", ref.repo_id, missing);
  if (failure) *failure = HubFailure::kNone;
  return std::move(*fetched);
}

Result<HubResolution> ResolveHubModel(const HubRef& ref, const HubResolveOptions& options,
                                      const HubSettings& settings, HubStats& stats,
                                      HubFailure* failure) {
  if (!settings.guard) return ResolveUnshared(ref, options, settings, stats, failure);
  // Lookups that would send the same requests share one (the token by a hash: it never becomes a
  // key in memory that outlives the request).
  const std::string key = fmt::format(
      "{}\n{}\n{}\n{}\n{}\n{}\n{}", settings.endpoint, ref.repo_id, ref.revision, ref.file,
      options.revision, options.gguf_file,
      fmt::format("{}{:x}", settings.offline ? "offline:" : "",
                  std::hash<std::string>{}(settings.token)));
  HubOutcome outcome = settings.guard->Shared(key, [&] {
    HubOutcome o{MakeError("no lookup"), HubFailure::kOther};
    o.result = ResolveUnshared(ref, options, settings, stats, &o.failure);
    return o;
  });
  if (failure) *failure = outcome.failure;
  return std::move(outcome.result);
}

std::string FormatHubSummary(const HubStats& stats, double seconds) {
  return fmt::format(
      "hub: {} requests ({} retries), {} received, {} weight headers fetched, {} "
      "from cache, {:.2f} s",
      stats.requests.load(), stats.retries.load(), FormatBytes(stats.bytes.load()),
      stats.headers_fetched.load(), stats.headers_cached.load(), seconds);
}

}  // namespace memfit
