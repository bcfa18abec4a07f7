#pragma once
// Finding a model on this machine: a directory, a single file, the Hugging Face cache, or the
// built-in catalog. Reads only headers and small JSON files. No network.

#include <optional>
#include <string>
#include <string_view>

#include "memfit/describe.h"
#include "memfit/result.h"

namespace memfit {

struct LocalResolveOptions {
  std::string revision = "main";  // --revision: branch, tag or commit sha (HF cache)
  std::string hf_hub_cache;       // resolved by the caller from HF_HUB_CACHE / HF_HOME / ~
  bool use_catalog = true;
};

// What kind of input a MODEL argument resolved to.
enum class InputKind : uint8_t { kDirectory, kFile, kHfCache, kCatalog, kNotFound };

struct LocalResolution {
  InputKind kind = InputKind::kNotFound;
  ModelInputs inputs;
};

// Tries, in order: a local directory; a single .safetensors or config.json file; a Hub id in the
// local HF cache (refs/<revision> -> snapshots/<sha>/); a Hub id or short name in the catalog.
// Returns kind kNotFound (not an error) when `spec` matches nothing, so a caller with network
// access can try the Hub next; an error when something matched but is unusable.
Result<LocalResolution> ResolveLocalModel(std::string_view spec, const LocalResolveOptions& options);

// Reads a model directory (config.json, model.safetensors, *.index.json + shards).
Result<ModelInputs> ReadModelDirectory(const std::string& dir);

// The HF hub cache directory from the environment, as huggingface_hub computes it:
// $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
// ~/.cache/huggingface/hub.
std::string DefaultHfHubCache();

// A repository path (or a revision) safe to join under a directory: relative, at most 1024
// bytes, no "." / ".." or empty segments, no NUL or backslash.
bool IsSafeRepoPath(std::string_view path);

// Whether `spec` looks like a Hub id ("org/name" or "name").
bool LooksLikeHubId(std::string_view spec);

}  // namespace memfit
