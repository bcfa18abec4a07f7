#pragma once
// llama.cpp flags and the runners behind `memfit gguf inference` and `memfit gguf fit`, also used
// by `memfit inference` and `memfit fit` for GGUF models (a .gguf file, --engine llama.cpp, a Hub
// repository's GGUF model).

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "cli/model_loader.h"
#include "memfit/llamacpp.h"
#include "memfit/render.h"
#include "memfit/requests.h"

namespace memfit::cli {

struct LlamaCppCliArgs {
  LlamaCppOptions options;
  std::string flash_attn = "auto";
  bool legacy_ngl = false;
  bool no_mmap = false;
  bool no_op_offload = false;
  std::vector<std::string> gpus;         // --gpu SIZE: one per GPU (free memory / total for fit)
  std::string ram;                       // --ram SIZE (fit)
  std::string cuda_context = "250MiB";   // --cuda-context SIZE
  std::vector<uint64_t> fit_target_mib;  // --fit-target MiB[,MiB...]
  uint64_t fit_ctx = 4096;               // --fit-ctx
  std::string tensor_split;              // -ts "3,1"
  std::string mmproj;                    // --mmproj FILE
  std::string format = "table";
  bool ctx_given = false, ngl_given = false;
  uint64_t batch_sequences = 1;  // --batch: sequences (llama.cpp --parallel)
  bool batch_given = false;
  bool curve = false;                    // --curve: memory against context (inference)
  std::vector<std::string> curve_gpus;   // --curve-gpu NAME|SIZE (default: --gpu)
};

// Adds llama.cpp's flags (llama.cpp spellings where CLI11 allows them) to a subcommand.
void AddLlamaCppOptions(CLI::App& cmd, LlamaCppCliArgs& args);
// Flags -> options (stage two of flag parsing).
Result<LlamaCppOptions> ResolveLlamaCppArgs(const LlamaCppCliArgs& args);
// `memfit inference`'s request as llama.cpp's flags: --context (-c), --batch (--parallel), --gpu,
// --gpus, --curve, --curve-gpu; the format is the caller's.
LlamaCppCliArgs LlamaCppArgsFor(const InferenceRequest& request);
// The report of RunLlamaCppInference for resolved `options`, or its first error (for the CLI and
// the server alike).
Result<std::string> LlamaCppInferenceText(const ModelArgs& model, const LlamaCppCliArgs& args,
                                          const LlamaCppOptions& options, OutputFormat format,
                                          std::optional<LoadedInputs> loaded = std::nullopt);
// Per-device memory for the given flags. `loaded`: the model's inputs when the caller has already
// resolved MODEL (and found a GGUF model); otherwise MODEL is resolved here.
void RunLlamaCppInference(const ModelArgs& model, const LlamaCppCliArgs& args, Context& ctx,
                          std::optional<LoadedInputs> loaded = std::nullopt);
// `memfit fit`'s request as llama.cpp's flags: --gpu (`gpus`: with --gpus N applied), --ram,
// --context; the format is the caller's.
LlamaCppCliArgs LlamaCppFitArgsFor(const FitCommandRequest& request,
                                   const std::vector<std::string>& gpus);
// The report of RunLlamaCppFit and whether the model fits, or the first error (for the CLI and
// the server alike).
struct LlamaCppFitText {
  std::string text;
  bool fits = false;
};
Result<LlamaCppFitText> LlamaCppFitReport(const ModelArgs& model, const LlamaCppCliArgs& args,
                                          OutputFormat format,
                                          std::optional<LoadedInputs> loaded = std::nullopt);
// Like llama.cpp --fit: the largest offload and longest context for --gpu/--ram (exit code 1 when
// it does not fit).
void RunLlamaCppFit(const ModelArgs& model, const LlamaCppCliArgs& args, Context& ctx,
                    std::optional<LoadedInputs> loaded = std::nullopt);

// `memfit gguf inference|fit MODEL.gguf ...`.
void AddGgufCommand(CLI::App& app, Context& ctx);

}  // namespace memfit::cli
