#pragma once
// Which model a request means: MODEL as typed (a local directory or file, a Hub id or URL, a
// catalog name) -> its inputs (config.json, weight headers, GGUF headers). One resolution for
// the CLI, the server and validation; the library never prints (progress and the Hub's summary
// line go to callbacks). Order and fallbacks: docs/hub.md, "Resolution order".

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "memfit/describe.h"
#include "memfit/load_summary.h"
#include "memfit/result.h"

namespace memfit {

struct ModelQuery {
  std::string spec;              // what the user typed
  std::string revision = "main";
  bool offline = false;          // --offline or HF_HUB_OFFLINE=1
  std::string token{};           // never printed
  std::string gguf_file{};       // which GGUF file of a Hub repository ("" = choose)
  // Weight headers read so far of all (Hub lookups that read four or more); may be empty.
  std::function<void(size_t done, size_t total)> progress = {};
  // The Hub's one-line summary (requests, bytes, time) after a lookup that asked the Hub or
  // its cache; may be empty.
  std::function<void(const std::string& line)> summary = {};
};

// A model's inputs and, when the Hub client gave them (from the Hub or memfit's Hub cache), the
// repository and GGUF file: what `llama-server --hf-repo ... --hf-file ...` needs.
struct ResolvedModel {
  ModelInputs inputs = {};
  std::string hub_repo_id = "";    // "" when not from the Hub client
  std::string hub_gguf_file = "";  // the chosen GGUF model of that repository, or ""
};

// Errors carry their kind (memfit/result.h): kNotFound when nothing anywhere matches,
// kForbidden for a gated or private repository, kUnavailable when the Hub could not be asked
// (offline, unreachable, past the lookup's deadline) and nothing local stands in.
Result<ResolvedModel> ResolveModel(const ModelQuery& query);

// A Hub id or URL only: memfit's Hub cache, an HF cache snapshot holding the weights, the Hub
// unless offline; when that fails, an HF cache snapshot without weights, then the catalog.
Result<ResolvedModel> ResolveHubQuery(const ModelQuery& query, const std::string& hf_hub_cache);

// Resolves and describes the model (`options`: builder conventions, e.g. accelerate mode).
Result<Model> ResolveAndDescribe(const ModelQuery& query, const DescribeOptions& options = {});

// A described model kept for many requests: the model and, on first use, what every load
// estimate of it computes first (thread-safe). Described with BuildOptions::compact_repeats (the
// load request), model() is compact (Tensor::copies): the summary and blocks count every copy.
class DescribedModel {
 public:
  explicit DescribedModel(Model model) : model_(std::move(model)) {}
  const Model& model() const { return model_; }
  // AssignBlocks(model(), TensorFilter{}): for EstimateLoad(model, options, blocks).
  const BlockAssignment& ResidentBlocks() const;
  // SummarizeLoad(model(), ResidentBlocks()): for EstimateLoad(summary, options), whose cost is
  // then O(blocks) per request instead of O(tensors).
  const LoadSummary& ResidentLoadSummary() const;

 private:
  Model model_;
  mutable std::once_flag blocks_once_;
  mutable BlockAssignment blocks_;
  mutable std::once_flag summary_once_;
  mutable LoadSummary summary_;
};

// The same answers, shared and immutable, through the process's model cache when it is on
// (ConfigureModelCache): a model asked for moments ago is neither resolved nor built again.
// The key is everything that changes the answer: the query (spec, revision, offline, GGUF file,
// a hash of the token), the Hub settings from the environment (endpoint, effective token, caches,
// offline), the working directory and, for a described model, `options`. A hit calls neither
// `progress` nor `summary`. Errors are never kept (HubGuard alone remembers an unreachable Hub).
Result<std::shared_ptr<const ResolvedModel>> ResolveModelShared(const ModelQuery& query);
Result<std::shared_ptr<const DescribedModel>> ResolveAndDescribeShared(
    const ModelQuery& query, const DescribeOptions& options = {});

// The model `resolved` describes, where `resolved` is ResolveModelShared(query)'s answer: kept
// like ResolveAndDescribeShared(query, options) when the cache is on (the resolution is not
// asked for again while it is kept), else described here.
Result<std::shared_ptr<const DescribedModel>> DescribeResolvedShared(
    const ModelQuery& query, const ResolvedModel& resolved, const DescribeOptions& options = {});

// How long a kept model stays valid (docs/hub.md, "The server's model cache"):
// - a catalog name: while no file of that name appears (the catalog is compiled in);
// - a local directory or file: while the files it was read from keep their size and mtime (and a
//   directory its entries), and at most `hub_ttl_ms`;
// - anything that went through the Hub client (the Hub, memfit's Hub cache, the HF cache, or the
//   catalog standing in after the Hub failed or was not asked): `hub_ttl_ms`.
struct ModelCacheOptions {
  size_t max_entries = 0;         // resolved models kept, and as many described ones; 0: off
  // All kept models together, in tensors (about 300 bytes each; a GGUF header counts one per 256
  // bytes): a model over half of it is answered but not kept.
  uint64_t max_tensors = 2'000'000;
  uint32_t hub_ttl_ms = 10'000;  // see above
};
// Sets the process's model cache (thread-safe); entries over the new size go, least recently used
// first. Off by default: the CLI resolves once per run. `memfit serve` turns it on.
void ConfigureModelCache(const ModelCacheOptions& options);
// Drops every kept model (tests).
void ClearModelCache();

}  // namespace memfit
