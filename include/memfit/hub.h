#pragma once
// The Hugging Face Hub client: reads a model's config.json and weight headers with HTTP range
// requests, never the weights. Behaves like huggingface_hub: the same environment variables, the
// same cache layout, the same errors (see docs/hub.md). Library memfit_net (libcurl).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/byte_source.h"
#include "memfit/describe.h"
#include "memfit/result.h"

namespace memfit {

class HubGuard;  // hub/net/hub_guard.h: single flight and failure memory

// Settings, with huggingface_hub's defaults; HubSettingsFromEnvironment fills them from the
// environment (huggingface_hub/constants.py).
struct HubSettings {
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT, trailing '/' stripped
  // Sent as "Authorization: Bearer ..." to the endpoint's host only. Precedence: --token, then
  // (unless HF_HUB_DISABLE_IMPLICIT_TOKEN) HF_TOKEN, then the file $HF_TOKEN_PATH
  // (default $HF_HOME/token). Never printed, logged or cached.
  std::string token;
  std::string hub_cache;     // HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE, $HF_HOME/hub, ...
  std::string memfit_cache;  // MEMFIT_CACHE, else $XDG_CACHE_HOME/memfit, else ~/.cache/memfit
  bool offline = false;      // --offline, HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE
  uint32_t metadata_timeout_ms = 10'000;  // HF_HUB_ETAG_TIMEOUT (seconds): API and small files
  uint32_t download_timeout_ms = 10'000;  // HF_HUB_DOWNLOAD_TIMEOUT (seconds): header ranges
  uint32_t max_attempts = 5;              // per request, for 429, 5xx, timeouts and resets
  uint32_t retry_base_ms = 1'000;         // backoff: base x 2^attempt, capped below
  uint32_t retry_max_ms = 8'000;          // also caps Retry-After
  uint32_t max_concurrency = 32;          // parallel shard header fetches
  uint64_t first_read_bytes = 128 << 10;  // the first range of a safetensors file (most headers fit)
  std::string ca_bundle;                  // REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE (requests' names)
  // MEMFIT_HUB_DEADLINE (seconds): the most network time one lookup may take, retries included;
  // past it the lookup fails as if the Hub were unreachable (0: no deadline; `memfit serve`: 5 s).
  uint32_t deadline_ms = 0;
  // Shares concurrent lookups of one model and remembers an unreachable Hub (docs/hub.md, "When
  // the Hub is slow or down"). HubSettingsFromEnvironment sets the process's guard; null: none.
  HubGuard* guard = nullptr;
};

// Reads the environment. `explicit_token` (--token) wins over every implicit source.
HubSettings HubSettingsFromEnvironment(std::string explicit_token = "", bool offline_flag = false);

// huggingface_hub's _is_true: "1", "ON", "YES", "TRUE", case-insensitive.
bool EnvIsTrue(const char* name);

// A Hub repository and revision, from "org/name", "name", "https://huggingface.co/org/name",
// ".../tree/<rev>", ".../blob/<rev>/<file>" or ".../resolve/<rev>/<file>" (also hf.co and the
// HF_ENDPOINT host).
struct HubRef {
  std::string repo_id;
  std::string revision;  // from the URL; empty when the URL names none
  std::string file;      // from a /blob/ or /resolve/ URL; empty otherwise
};
// Whether `spec` is a URL memfit should parse as a Hub URL (http:// or https://, or hf.co/...).
bool LooksLikeHubUrl(std::string_view spec);
Result<HubRef> ParseHubRef(std::string_view spec, std::string_view endpoint);
// Percent-encodes everything but RFC 3986 unreserved characters: quote(s, safe="") in Python,
// used for a revision in a URL path ("refs/pr/1" -> "refs%2Fpr%2F1").
std::string PercentEncodeSegment(std::string_view s);
// Percent-encodes a repo file path, keeping '/' (quote(path) in Python).
std::string PercentEncodePath(std::string_view s);
// Checks a revision for use in URLs and cache paths: non-empty, no "..", no NUL, at most 256 bytes.
Status ValidateRevision(std::string_view revision);

// Counters for the one-line summary; shared by the worker threads.
struct HubStats {
  std::atomic<uint64_t> requests{0};       // HTTP requests sent, redirects and retries included
  std::atomic<uint64_t> bytes{0};          // response body bytes received
  std::atomic<uint64_t> retries{0};
  std::atomic<uint64_t> headers_fetched{0};  // weight headers read over the network
  std::atomic<uint64_t> headers_cached{0};   // weight headers read from a cache or local file
};

struct HubResolveOptions {
  std::string revision = "main";
  std::string gguf_file = "";  // --gguf-file: which GGUF file of a GGUF repository to use
  // Called from worker threads (serialized) as weight headers arrive: (done, total). The CLI
  // draws progress on stderr with it when stderr is a terminal.
  std::function<void(size_t done, size_t total)> progress = nullptr;
};

// What the Hub (or the cache filled by an earlier run) gave.
struct HubResolution {
  ModelInputs inputs;
  std::string commit;            // the commit sha the revision resolved to
  bool from_cache = false;       // no network used
  std::vector<std::string> gguf_files;  // every *.gguf file in the repository, sorted
  // Layout "gguf": the chosen model (its file, or the first file of a split); inputs.gguf holds
  // the headers of all its files, named by their paths in the repository.
  std::string gguf_file;
  std::string layout;  // "transformers", "diffusers", "sentence-transformers", "gguf"
};

enum class HubFailure : uint8_t {
  kNone,
  kNotCached,    // offline (or nothing usable) and the cache lacks what is needed
  kUnreachable,  // could not connect, DNS failure, proxy failure
  kOther,        // the Hub answered with an error (not found, gated, ...), or bad data
};

// Resolves `ref` at `options.revision` (a URL's revision wins when options.revision is "main"):
// first from the caches written by an earlier run (no network), then, unless offline, from the
// Hub. Caches what it fetched. `failure` (optional) says why it failed.
Result<HubResolution> ResolveHubModel(const HubRef& ref, const HubResolveOptions& options,
                                      const HubSettings& settings, HubStats& stats,
                                      HubFailure* failure = nullptr);

// "hub: 330 requests, 12.3 MiB received, 163 headers fetched, 0 cached, 0.71 s".
std::string FormatHubSummary(const HubStats& stats, double seconds);

}  // namespace memfit
