#pragma once
// MODEL argument -> Model: local directory or file, the HF cache, the Hub (when built with the
// network client), the built-in catalog. Shared by every subcommand that takes a MODEL.

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
};

// Adds MODEL, --revision, --offline and --token to a subcommand.
void AddModelArgs(CLI::App& command, ModelArgs& args);

// Resolves and describes the model. `options` selects builder conventions (accelerate mode).
Result<Model> LoadModel(const ModelArgs& args, const DescribeOptions& options);
// The raw inputs (for modes that need the config itself).
Result<ModelInputs> LoadModelInputs(const ModelArgs& args);

}  // namespace memfit::cli
