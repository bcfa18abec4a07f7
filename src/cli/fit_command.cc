// `memfit fit MODEL --gpu ...`: will it run here, with which device map, how fast at most, and
// what to change so it does. The flags are a FitCommandRequest's fields (memfit/requests.h states
// the defaults); RunFitCommandRequest answers it, as it does for POST /api/v1/fit.

#include "cli/command.h"
#include "cli/options_binding.h"
#include "cli/llamacpp_cli.h"
#include "cli/model_loader.h"
#include "cli/terminal.h"
#include "cli/vocabulary.h"
#include "memfit/requests.h"

namespace memfit::cli {
namespace {

using FitArgs = RequestArgs<FitCommandRequest>;

void RunFit(FitArgs& args, Context& ctx) {
  auto write = [&](FitAnswer& answer, OutputFormat format) {
    if (answer.kind == FitAnswer::Kind::kLlamaCpp) {
      // GGUF models are planned the way llama.cpp --fit does (layers, context, n-cpu-moe).
      LlamaCppCliArgs llama = api::LlamaCppFitArgsFor(args.request, answer.gpus);
      llama.format = args.format;
      return RunLlamaCppFit(args.model, llama, ctx, std::move(answer.resolved));
    }
    ctx.out << RenderFitAnswer(answer, format, TerminalLayout(args.wide));
    if (answer.kind == FitAnswer::Kind::kDeviceMap &&
        answer.plan_request.reserve_bytes_per_gpu == 0 && answer.runtime.task == "load") {
      ctx.Note("no memory kept for the CUDA context (about 0.3-1.3 GiB measured); "
               "add --reserve 1GiB");
    }
  };
  RunRequestCommand(args, ctx, RunFitCommandRequest, write);
}

}  // namespace

void AddFitCommand(CLI::App& app, Context& ctx) {
  AddRequestCommand<FitCommandRequest>(
      app, ctx, "fit", "will the model run on these devices: verdict, device map, speed bounds, "
                       "advice",
      RunFit);
}

}  // namespace memfit::cli
