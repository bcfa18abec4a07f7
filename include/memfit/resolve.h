#pragma once
// Which model a request means: MODEL as typed (a local directory or file, a Hub id or URL, a
// catalog name) -> its inputs (config.json, weight headers, GGUF headers). One resolution for
// the CLI, the server and validation; the library never prints (progress and the Hub's summary
// line go to callbacks). Order and fallbacks: docs/hub.md, "Resolution order".

#include <cstddef>
#include <functional>
#include <string>

#include "memfit/describe.h"
#include "memfit/result.h"

namespace memfit {

struct ModelQuery {
  std::string spec;              // what the user typed
  std::string revision = "main";
  bool offline = false;          // --offline or HF_HUB_OFFLINE=1
  std::string token;             // never printed
  std::string gguf_file;         // which GGUF file of a Hub repository ("" = choose)
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

}  // namespace memfit
