#pragma once
// One resolution's state, shared by the resolver (hub_resolver.cc) and the readers of the files it
// needs (small files here, safetensors headers in weight_headers.cc, GGUF headers in
// gguf_headers.cc): the repository and its commit, the file list, settings, caches, counters.

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <optional>
#include <string>

#include "hub/net/http_client.h"
#include "hub/net/hub_cache.h"
#include "memfit/hub.h"

namespace memfit::hubnet {

// config.json, indexes, model_index.json, modules.json (DeepSeek-V3's index is ~9 MB).
inline constexpr uint64_t kMaxJsonBytes = 64ull << 20;

struct HubSession {
  const HubRef& ref;
  std::string revision;
  std::string commit = {};
  const HubSettings& settings;
  HubStats& stats;
  HubCache cache;
  bool online = false;
  const HubResolveOptions& options;
  std::map<std::string, RepoFile> files = {};  // by path
  // The longest safetensors header (N) read so far in this resolution: the first range of the
  // next header is sized to hold one like it (weight_headers.cc).
  std::atomic<uint64_t> largest_header_bytes{0};

  std::string ResolveUrl(std::string_view path) const {
    return fmt::format("{}/{}/resolve/{}/{}", settings.endpoint, ref.repo_id,
                       PercentEncodeSegment(commit), PercentEncodePath(path));
  }
  ErrorContext Context(std::string file) const { return {ref.repo_id, revision, std::move(file)}; }
};

// A small file (at most kMaxJsonBytes): the HF snapshot, else (online, `client` not null) the
// Hub, written to the snapshot. nullopt when offline and absent.
inline Result<std::optional<std::string>> ReadSmallFile(HubSession& s, const std::string& path,
                                                        HttpClient* client) {
  if (auto cached = s.cache.ReadSnapshotFile(s.ref.repo_id, s.commit, path, kMaxJsonBytes)) {
    return std::optional<std::string>(std::move(*cached));
  }
  if (!s.online || !client) return std::optional<std::string>();
  HttpRequest request{.url = s.ResolveUrl(path),
                      .max_body_bytes = kMaxJsonBytes,
                      .timeout_ms = s.settings.metadata_timeout_ms};
  MEMFIT_ASSIGN_OR_RETURN(auto response, client->Get(request, s.Context(path)));
  s.cache.WriteSnapshotFile(s.ref.repo_id, s.commit, s.files.at(path), response.body);
  return std::optional<std::string>(std::move(response.body));
}

}  // namespace memfit::hubnet
