#pragma once
// MODEL argument -> Model: local directory or file, the HF cache, the Hub (when built with the
// network client), the built-in catalog. Shared by every subcommand that takes a MODEL.

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "memfit/describe.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit::cli {

struct ModelArgs {
  std::string spec;             // what the user typed
  std::string revision = "main";
  bool offline = false;         // --offline or HF_HUB_OFFLINE=1
  std::string token;            // --token (never printed)
  std::string gguf_file;        // --gguf-file: which GGUF file of a Hub repository
  std::ostream* log = nullptr;  // Hub progress and summary line; nullptr: std::cerr
};

// Adds MODEL, --revision, --offline, --token and --gguf-file to a subcommand.
void AddModelArgs(CLI::App& command, ModelArgs& args);

// Resolves and describes the model. `options` selects builder conventions (accelerate mode).
Result<Model> LoadModel(const ModelArgs& args, const DescribeOptions& options);
// The raw inputs (for modes that need the config itself).
Result<ModelInputs> LoadModelInputs(const ModelArgs& args);
// A Hub id or URL (hub_loader.cc): memfit's Hub cache, an HF cache snapshot with the weights, the
// Hub unless offline; when that fails, an HF snapshot without weights, then the catalog.
Result<ModelInputs> LoadHubModelInputs(const ModelArgs& args, const std::string& hf_hub_cache);

}  // namespace memfit::cli
