#include "cli/vocabulary.h"

#include <algorithm>

#include "cli/options_binding.h"
#include "cli/request_flags.h"
#include "memfit/requests.h"

namespace memfit::cli {

Status ParseFlags(CLI::App& app, const std::string& command, const std::vector<std::string>& args) {
  app.get_subcommand(command)->callback([] {});
  std::vector<std::string> argv = {command};
  argv.insert(argv.end(), args.begin(), args.end());
  std::reverse(argv.begin(), argv.end());  // CLI11 takes them last first
  try {
    app.parse(argv);
  } catch (const CLI::ParseError& e) {
    return MakeError("{} {}", command, e.what());
  } catch (const OptionValueError& e) {
    return MakeError("{}", e.what());
  }
  return Ok{};
}

CLI::Option* AddContextOption(CLI::App& cmd, uint64_t& tokens, const std::string& help) {
  return cmd.add_option("-c,--context,--ctx-size,--ctx", tokens, help);
}

CLI::Option* AddBatchOption(CLI::App& cmd, uint64_t& sequences, const std::string& help) {
  return cmd.add_option("--batch", sequences, help);
}

void AddCurveOptions(CLI::App& cmd, bool& curve, std::vector<std::string>& gpus) {
  cmd.add_flag("--curve", curve,
               "memory against context (256 tokens to the model's maximum) and the longest context "
               "on each --curve-gpu (transformers: the total per GPU; vLLM/SGLang: the batch's KV "
               "cache against the engine's pool; llama.cpp: the largest GPU, every layer offloaded)");
  cmd.add_option("--curve-gpu", gpus, "a catalog GPU or a size for --curve (repeat for more; default --gpu)");
}

Result<std::vector<CurveGpu>> CurveGpus(const std::vector<std::string>& words) {
  return ParseCurveGpus(words);
}

void AddVersionOptions(CLI::App& cmd, VersionArgs& args) {
  const RuntimeVersions current;
  cmd.add_option("--torch-version", args.torch,
                 "torch release whose allocations to follow, major.minor (default " +
                     LibraryVersionName(current.torch) + ")");
  cmd.add_option("--transformers-version", args.transformers,
                 "transformers release whose allocations to follow, major.minor (default " +
                     LibraryVersionName(current.transformers) + ")");
}

void AddMambaScanOption(CLI::App& cmd, std::string& scan) {
  cmd.add_option("--mamba-scan", scan,
                 "Mamba-2 layers in transformers: kernels (mamba_ssm installed, the default) or "
                 "torch (its chunked scan: CPU, or no mamba_ssm)");
}

Result<RuntimeVersions> ToRuntimeVersions(const VersionArgs& args) {
  return ParseRuntimeVersions(args.torch, args.transformers);
}

}  // namespace memfit::cli
