#include "cli/vocabulary.h"

#include "memfit/gpu.h"
#include "memfit/units.h"

namespace memfit::cli {

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
  std::vector<CurveGpu> gpus;
  for (const auto& word : words) {
    if (auto gpu = FindGpu(word)) {
      gpus.push_back({std::string((*gpu)->name), MemoryBytes(**gpu), ComputeCapability(**gpu)});
      continue;
    }
    auto bytes = ParseByteSize(word);
    if (!bytes) return MakeError("--curve-gpu \"{}\": neither a catalog GPU nor a size (24GiB)", word);
    gpus.push_back({word, *bytes, 0});
  }
  return gpus;
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

Result<RuntimeVersions> ToRuntimeVersions(const VersionArgs& args) {
  RuntimeVersions v;
  if (!args.torch.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(v.torch, ParseLibraryVersion(args.torch, "--torch-version"));
  }
  if (!args.transformers.empty()) {
    MEMFIT_ASSIGN_OR_RETURN(v.transformers,
                            ParseLibraryVersion(args.transformers, "--transformers-version"));
  }
  return v;
}

}  // namespace memfit::cli
