#pragma once
// llama.cpp's answers for GGUF models: `memfit inference|fit` on a .gguf file, --engine llama.cpp
// or a Hub repository's GGUF model, and `memfit gguf inference|fit`. The flags are a plain struct
// (the CLI binds them in cli/llamacpp_cli.cc; the API, Python and the browser fill them from the
// inference and fit requests), and each answer is rendered text in the requested format.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/llamacpp.h"
#include "memfit/render.h"
#include "memfit/requests.h"
#include "memfit/resolve.h"

namespace memfit::api {

struct LlamaCppArgs {
  LlamaCppOptions options{};
  std::string flash_attn = "auto";
  bool legacy_ngl = false;
  bool no_mmap = false;
  bool no_op_offload = false;
  std::vector<std::string> gpus{};       // --gpu SIZE: one per GPU (free memory / total for fit)
  std::string ram{};                     // --ram SIZE (fit)
  std::string cuda_context = "250MiB";   // --cuda-context SIZE
  std::vector<uint64_t> fit_target_mib{};  // --fit-target MiB[,MiB...]
  uint64_t fit_ctx = 4096;               // --fit-ctx
  std::string tensor_split{};            // -ts "3,1"
  std::string mmproj{};                  // --mmproj FILE
  std::string format = "table";
  bool ctx_given = false, ngl_given = false;
  uint64_t batch_sequences = 1;  // --batch: sequences (llama.cpp --parallel)
  bool batch_given = false;
  bool curve = false;                    // --curve: memory against context (inference)
  std::vector<std::string> curve_gpus{};  // --curve-gpu NAME|SIZE (default: --gpu)
};

// Flags -> options (stage two of flag parsing).
Result<LlamaCppOptions> ResolveLlamaCppArgs(const LlamaCppArgs& args);
// `memfit inference`'s request as llama.cpp's flags: --context (-c), --batch (--parallel), --gpu,
// --gpus, --curve, --curve-gpu; the format is the caller's.
LlamaCppArgs LlamaCppArgsFor(const InferenceRequest& request);
// `memfit fit`'s request as llama.cpp's flags: --gpu (`gpus`: with --gpus N applied), --ram,
// --context; the format is the caller's.
LlamaCppArgs LlamaCppFitArgsFor(const FitCommandRequest& request,
                                const std::vector<std::string>& gpus);

// Per-device memory for resolved `options`, or the first error. `given`: the model's inputs when
// the caller has already resolved MODEL (and found a GGUF model); otherwise it is resolved here.
Result<std::string> LlamaCppInferenceText(const ModelQuery& model, const LlamaCppArgs& args,
                                          const LlamaCppOptions& options, OutputFormat format,
                                          std::optional<ResolvedModel> given = std::nullopt);

// llama.cpp --fit's plan as text, and whether the model fits, or the first error.
struct LlamaCppFitText {
  std::string text;
  bool fits = false;
};
Result<LlamaCppFitText> LlamaCppFitReport(const ModelQuery& model, const LlamaCppArgs& args,
                                          OutputFormat format,
                                          std::optional<ResolvedModel> given = std::nullopt);

}  // namespace memfit::api
