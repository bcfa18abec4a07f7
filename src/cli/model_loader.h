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
  // Hub progress and summary line; nullptr: std::cerr, which is a terminal when isatty(2).
  std::ostream* log = nullptr;
  bool log_is_terminal = false;  // for a `log` given: draw the progress line on it
};

// Adds MODEL, --revision, --offline, --token and --gguf-file to a subcommand.
void AddModelArgs(CLI::App& command, ModelArgs& args);

// A model's inputs and, when the Hub client gave them (from the Hub or memfit's Hub cache), which
// repository and GGUF model: commands that print how to load the model need it
// (`llama-server --hf-repo ... --hf-file ...`).
struct LoadedInputs {
  ModelInputs inputs = {};
  std::string hub_repo_id = "";    // "" when not from the Hub client
  std::string hub_gguf_file = "";  // the chosen GGUF model of that repository, or ""
};

// Resolves and describes the model. `options` selects builder conventions (accelerate mode).
Result<Model> LoadModel(const ModelArgs& args, const DescribeOptions& options);
// The raw inputs (for modes that need the config itself).
Result<ModelInputs> LoadModelInputs(const ModelArgs& args);
Result<LoadedInputs> LoadModelInputsWithOrigin(const ModelArgs& args);
// A Hub id or URL (hub_loader.cc): memfit's Hub cache, an HF cache snapshot with the weights, the
// Hub unless offline; when that fails, an HF snapshot without weights, then the catalog.
Result<LoadedInputs> LoadHubModelInputs(const ModelArgs& args, const std::string& hf_hub_cache);

}  // namespace memfit::cli
