#include "cli/model_loader.h"

#include <unistd.h>

#include <iostream>
#include <memory>

namespace memfit::cli {

// A guessed shard that was not needed never counts as done: the line may stay open.
ModelQuery QueryFor(const ModelArgs& args, const std::shared_ptr<bool>& line_open) {
  ModelQuery q{.spec = args.spec, .revision = args.revision, .offline = args.offline,
               .token = args.token, .gguf_file = args.gguf_file};
  std::ostream* log = args.log ? args.log : &std::cerr;
  if (args.log ? args.log_is_terminal : ::isatty(STDERR_FILENO) == 1) {
    q.progress = [log, line_open](size_t done, size_t total) {
      if (total < 4) return;
      *log << "\rmemfit: reading weight headers " << done << "/" << total
           << (done == total ? "\n" : "") << std::flush;
      *line_open = done != total;
    };
  }
  q.summary = [log, line_open](const std::string& line) {
    if (*line_open) *log << "\n";
    *line_open = false;
    *log << "memfit: " << line << "\n";
  };
  return q;
}

void EndProgressLine(const ModelArgs& args) { *(args.log ? args.log : &std::cerr) << "\n"; }

void AddModelArgs(CLI::App& command, ModelArgs& args) {
  command.add_option("MODEL", args.spec,
                     "a model directory, a .safetensors or config.json file, a Hub id (local HF "
                     "cache, then the Hub), or a catalog name (see `memfit models`)")
      ->required();
  // --revision, --offline, --token and --gguf-file come from the option table
  // (api/options.h), bound to these fields by BindOptions (cli/options_binding.h).
}

Result<LoadedInputs> LoadModelInputsWithOrigin(const ModelArgs& args) {
  return WithQuery(args, [](const ModelQuery& q) { return ResolveModel(q); });
}

Result<ModelInputs> LoadModelInputs(const ModelArgs& args) {
  MEMFIT_ASSIGN_OR_RETURN(LoadedInputs loaded, LoadModelInputsWithOrigin(args));
  return std::move(loaded.inputs);
}

Result<Model> LoadModel(const ModelArgs& args, const DescribeOptions& options) {
  return WithQuery(args, [&](const ModelQuery& q) { return ResolveAndDescribe(q, options); });
}

Result<std::shared_ptr<const DescribedModel>> LoadSharedModel(const ModelArgs& args,
                                                              const DescribeOptions& options) {
  return WithQuery(args, [&](const ModelQuery& q) { return ResolveAndDescribeShared(q, options); });
}

Result<LoadedInputs> LoadHubModelInputs(const ModelArgs& args, const std::string& hf_hub_cache) {
  return WithQuery(args, [&](const ModelQuery& q) { return ResolveHubQuery(q, hf_hub_cache); });
}

}  // namespace memfit::cli
