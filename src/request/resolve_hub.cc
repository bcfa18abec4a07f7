// MODEL as a Hub id or URL: the Hub client with its caches, and the offline fallbacks.
// Order (docs/hub.md): memfit's Hub cache -> an HF cache snapshot holding the weights -> the Hub
// (unless offline) -> when that fails: an HF snapshot without weights, then the built-in catalog.

#include <chrono>

#include "memfit/hub.h"
#include "memfit/local_source.h"
#include "memfit/resolve.h"

namespace memfit {

Result<ResolvedModel> ResolveHubQuery(const ModelQuery& query, const std::string& hf_hub_cache) {
  HubSettings settings = HubSettingsFromEnvironment(query.token, query.offline);
  MEMFIT_ASSIGN_OR_RETURN(HubRef ref, ParseHubRef(query.spec, settings.endpoint));
  HubResolveOptions options{.revision = query.revision, .gguf_file = query.gguf_file};
  if (query.progress) options.progress = query.progress;
  HubStats stats;
  HubFailure failure = HubFailure::kNone;
  const auto start = std::chrono::steady_clock::now();
  auto resolved = ResolveHubModel(ref, options, settings, stats, &failure);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (query.summary && (resolved || stats.requests > 0)) {
    query.summary(FormatHubSummary(stats, seconds));
  }
  if (resolved) {
    return ResolvedModel{.inputs = std::move(resolved->inputs), .hub_repo_id = ref.repo_id,
                         .hub_gguf_file = resolved->gguf_file};
  }
  // A snapshot in the HF cache (even without weights), then the catalog, beat an error; the
  // assumption quotes why the Hub was not used (gated, offline, unreachable, ...).
  const bool not_asked = failure == HubFailure::kNotCached || failure == HubFailure::kUnreachable;
  LocalResolveOptions local_options{.revision = query.revision, .hf_hub_cache = hf_hub_cache};
  auto local = ResolveLocalModel(ref.repo_id, local_options);
  if (local && local->kind != InputKind::kNotFound) {
    local->inputs.assumptions.push_back(
        fmt::format("the Hub was not used ({})", resolved.error().message));
    return ResolvedModel{.inputs = std::move(local->inputs)};
  }
  if (not_asked) {
    return WithKind(MakeError("{}: model not found locally, in the Hugging Face cache or in the "
                              "catalog, and the Hub could not be asked: {}",
                              query.spec, resolved.error().message),
                    ErrorKind::kUnavailable);
  }
  return resolved.error();
}

}  // namespace memfit
