// MODEL as a Hub id or URL: the Hub client with its caches, and the offline fallbacks.
// Order (docs/hub.md): memfit's Hub cache -> an HF cache snapshot holding the weights -> the Hub
// (unless offline) -> when that fails: an HF snapshot without weights, then the built-in catalog.

#include <unistd.h>

#include <chrono>
#include <iostream>

#include "cli/model_loader.h"
#include "memfit/hub.h"
#include "memfit/local_source.h"

namespace memfit::cli {

Result<LoadedInputs> LoadHubModelInputs(const ModelArgs& args, const std::string& hf_hub_cache) {
  HubSettings settings = HubSettingsFromEnvironment(args.token, args.offline);
  MEMFIT_ASSIGN_OR_RETURN(HubRef ref, ParseHubRef(args.spec, settings.endpoint));
  std::ostream& log = args.log ? *args.log : std::cerr;
  HubResolveOptions options{.revision = args.revision, .gguf_file = args.gguf_file};
  // The progress line is redrawn in place, so only on a terminal; `line_open` says whether it
  // still needs its newline (a guessed shard that was not needed never counts as done).
  bool line_open = false;
  if (args.log ? args.log_is_terminal : ::isatty(STDERR_FILENO) == 1) {
    options.progress = [&log, &line_open](size_t done, size_t total) {
      if (total < 4) return;
      log << "\rmemfit: reading weight headers " << done << "/" << total
          << (done == total ? "\n" : "") << std::flush;
      line_open = done != total;
    };
  }
  HubStats stats;
  HubFailure failure = HubFailure::kNone;
  const auto start = std::chrono::steady_clock::now();
  auto resolved = ResolveHubModel(ref, options, settings, stats, &failure);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (line_open) log << "\n";
  if (resolved || stats.requests > 0) log << "memfit: " << FormatHubSummary(stats, seconds) << "\n";
  if (resolved) {
    return LoadedInputs{.inputs = std::move(resolved->inputs), .hub_repo_id = ref.repo_id,
                        .hub_gguf_file = resolved->gguf_file};
  }
  // A snapshot in the HF cache (even without weights), then the catalog, beat an error; the
  // assumption quotes why the Hub was not used (gated, offline, unreachable, ...).
  const bool not_asked = failure == HubFailure::kNotCached || failure == HubFailure::kUnreachable;
  LocalResolveOptions local_options{.revision = args.revision, .hf_hub_cache = hf_hub_cache};
  auto local = ResolveLocalModel(ref.repo_id, local_options);
  if (local && local->kind != InputKind::kNotFound) {
    local->inputs.assumptions.push_back(
        fmt::format("the Hub was not used ({})", resolved.error().message));
    return LoadedInputs{.inputs = std::move(local->inputs)};
  }
  if (not_asked) {
    return MakeError("{}: model not found locally, in the Hugging Face cache or in the catalog, and "
                     "the Hub could not be asked: {}", args.spec, resolved.error().message);
  }
  return resolved.error();
}

}  // namespace memfit::cli
