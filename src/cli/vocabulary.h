#pragma once
// The words every command shares, so that one quantity has one name (docs/cli.md, "Shared
// vocabulary"): --context (-c, --ctx-size, --ctx) tokens per sequence; --batch sequences;
// --gpu a GPU kind (catalog name or size); --gpus a count of GPUs; --engine the runtime. Old
// spellings keep working with a one-line deprecation note on stderr.

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "memfit/context_curve.h"
#include "memfit/result.h"
#include "memfit/runtime_versions.h"

namespace memfit::cli {

// --context, -c, --ctx-size, --ctx: tokens per sequence (prompt + generated); 0 or absent: the
// default of memfit/context_default.h.
CLI::Option* AddContextOption(CLI::App& cmd, uint64_t& tokens, const std::string& help);

// --batch: sequences (at once for serving; per GPU per step for training, with --micro-batch as
// an alias there).
CLI::Option* AddBatchOption(CLI::App& cmd, uint64_t& sequences, const std::string& help);

// --curve and --curve-gpu (inference, gguf inference): memory against context and the longest
// context on each GPU (docs/cli.md, "Memory against context").
void AddCurveOptions(CLI::App& cmd, bool& curve, std::vector<std::string>& gpus);
// The curve's GPUs from their words: a catalog name (its memory and compute capability) or a size
// ("24GiB").
Result<std::vector<CurveGpu>> CurveGpus(const std::vector<std::string>& words);

// --torch-version and --transformers-version (train, inference): the library releases whose
// allocations the estimate follows (memfit/runtime_versions.h); empty: the current releases.
struct VersionArgs {
  std::string torch;
  std::string transformers{};
};
void AddVersionOptions(CLI::App& cmd, VersionArgs& args);
Result<RuntimeVersions> ToRuntimeVersions(const VersionArgs& args);

// --mamba-scan (train, inference): how transformers runs Mamba-2 layers, "kernels" (mamba_ssm
// installed) or "torch" (its chunked scan: CPU, or no mamba_ssm); empty: kernels (docs/estimates.md,
// "Mamba-2 in transformers without mamba_ssm").
void AddMambaScanOption(CLI::App& cmd, std::string& scan);

// An old spelling of `flag`, hidden from --help, that sets the same variable and says once on
// stderr: "memfit: note: --seq is deprecated: use --context".
template <typename T>
CLI::Option* AddDeprecatedOption(CLI::App& cmd, Context& ctx, const std::string& old_flag,
                                 const std::string& flag, T& target) {
  return cmd.add_option(old_flag, target)
      ->group("")
      ->each([&ctx, old_flag, flag](const std::string&) {
        ctx.Note(old_flag + " is deprecated: use " + flag);
      });
}

}  // namespace memfit::cli
