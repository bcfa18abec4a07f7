#pragma once
// The MODEL argument and its flags (--revision, --offline, --token, --gguf-file) -> a ModelQuery
// for the library's resolution (memfit/resolve.h), with the Hub's progress line and summary drawn
// on stderr. Shared by every subcommand that takes a MODEL.

#include <memory>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "memfit/describe.h"
#include "memfit/model.h"
#include "memfit/resolve.h"
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

// Adds the positional MODEL to a subcommand (its flags: BindOptions, cli/options_binding.h).
void AddModelArgs(CLI::App& command, ModelArgs& args);
// A newline on the progress line's stream (args.log, else stderr).
void EndProgressLine(const ModelArgs& args);

using LoadedInputs = ResolvedModel;

// The library's query for MODEL (memfit/resolve.h), with the Hub's progress line on a terminal and
// its summary line; `line_open` says whether the progress line still needs its newline.
ModelQuery QueryFor(const ModelArgs& args, const std::shared_ptr<bool>& line_open);
// Runs `resolve(query)` with QueryFor's query, and ends a progress line left open.
template <typename F>
auto WithQuery(const ModelArgs& args, F resolve) {
  auto line_open = std::make_shared<bool>(false);
  auto result = resolve(QueryFor(args, line_open));
  if (*line_open) EndProgressLine(args);
  return result;
}

// Resolves (memfit/resolve.h) with the progress line on a terminal and the Hub's summary line.
Result<LoadedInputs> LoadModelInputsWithOrigin(const ModelArgs& args);
Result<ModelInputs> LoadModelInputs(const ModelArgs& args);
// Resolves and describes the model. `options` selects builder conventions (accelerate mode).
Result<Model> LoadModel(const ModelArgs& args, const DescribeOptions& options);
// The same model, shared and immutable: from the process's model cache when it is on
// (ResolveAndDescribeShared), without a copy.
Result<std::shared_ptr<const DescribedModel>> LoadSharedModel(const ModelArgs& args,
                                                              const DescribeOptions& options);
// A Hub id or URL only (ResolveHubQuery), with the same printing.
Result<LoadedInputs> LoadHubModelInputs(const ModelArgs& args, const std::string& hf_hub_cache);

}  // namespace memfit::cli
