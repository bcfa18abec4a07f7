// `memfit inference MODEL`: weights, KV cache, prefill activations, CUDA context and the total
// per GPU, for transformers and serving engines (vLLM, SGLang).

#include <algorithm>
#include <sstream>

#include "cli/command.h"
#include "cli/llamacpp_cli.h"
#include "cli/model_loader.h"
#include "cli/options_binding.h"
#include "cli/request_flags.h"
#include "cli/terminal.h"
#include "cli/vocabulary.h"
#include "memfit/context_curve.h"
#include "memfit/context_default.h"
#include "memfit/estimate_inference.h"
#include "memfit/gpu.h"
#include "memfit/render_memory.h"
#include "memfit/requests.h"
#include "memfit/units.h"

namespace memfit::cli {
namespace {

using InferenceArgs = RequestArgs<InferenceRequest>;

// The single dispatch point for llama.cpp / GGUF inference: the llama.cpp estimator with this
// command's --context (absent: the same default as `memfit gguf inference`), --batch (parallel
// sequences), --gpu, --gpus and --format; every llama.cpp flag (-ngl, -ctk, -fa, ...) is available
// through `memfit gguf inference`, which gives the same answer for the same flags.
void RunLlamaCpp(const InferenceArgs& args, Context& ctx,
                 std::optional<LoadedInputs> loaded = std::nullopt) {
  LlamaCppCliArgs llama = api::LlamaCppArgsFor(args.request);
  llama.format = args.format;
  RunLlamaCppInference(args.model, llama, ctx, std::move(loaded));
}

void RunInference(InferenceArgs& args, Context& ctx) {
  auto write = [&](InferenceAnswer& answer, OutputFormat format) {
    if (answer.llamacpp) return RunLlamaCpp(args, ctx, std::move(answer.resolved));
    ctx.out << RenderInferenceAnswer(answer, format, TerminalLayout(args.wide));
  };
  RunRequestCommand(args, ctx, RunInferenceRequest, write);
}

constexpr char kInferenceHelp[] = "memory to serve the model: weights, KV cache, prefill "
                                  "activations, CUDA context, per GPU (transformers, vLLM, SGLang)";

}  // namespace

void AddInferenceCommand(CLI::App& app, Context& ctx) {
  AddRequestCommand<InferenceRequest>(app, ctx, "inference", kInferenceHelp, RunInference);
}

Result<InferenceRequest> InferenceRequestFromFlags(const std::vector<std::string>& args) {
  return RequestFromFlags<InferenceRequest>("inference", kInferenceHelp, args);
}

}  // namespace memfit::cli
