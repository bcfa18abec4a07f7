// `memfit estimate-memory MODEL`: load memory per dtype, largest block, training with AdamW;
// `--accelerate` reproduces `accelerate estimate-memory` exactly.

#include "cli/command.h"
#include "cli/options_binding.h"
#include "cli/model_loader.h"
#include "memfit/estimate_load.h"
#include "memfit/render.h"
#include "memfit/requests.h"

namespace memfit::cli {
namespace {

// The request's fields are the flags' variables (memfit/requests.h states the defaults).
struct EstimateArgs {
  ModelArgs model;
  LoadRequest request;
  std::string format = "table";
};

void RunEstimate(const EstimateArgs& args, Context& ctx) {
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  if (args.request.trust_remote_code) {
    ctx.Note("--trust_remote_code accepted for compatibility: memfit never runs remote code");
  }
  auto answer = WithQuery(args.model, [&](ModelQuery query) {
    LoadRequest request = args.request;
    request.model = std::move(query);
    return RunLoadRequest(request);
  });
  if (!answer) return ctx.Fail(answer.error());
  if (!answer->accelerate) {
    ctx.out << RenderLoadEstimate(answer->model->model(), answer->estimate, *format);
    return;
  }
  if (*format == OutputFormat::kTable) {
    ctx.out << "Loading pretrained config for `" << args.model.spec << "` from `"
            << answer->library << "`...\n";
  }
  ctx.out << RenderAccelerate(args.model.spec, *answer->accelerate, *format);
  if (answer->without_config) {
    ctx.Note("no config.json: the accelerate view was computed from the safetensors headers");
  }
}

}  // namespace

void AddEstimateMemoryCommand(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<EstimateArgs>();
  auto* cmd = app.add_subcommand(
      "estimate-memory",
      "memory to load the model per dtype, its largest indivisible block, and full training with "
      "AdamW (weights, gradients, optimizer states)");
  AddModelArgs(*cmd, args->model);
  BindOptions(*cmd, api::Options(args->request), ctx, &args->model);
  AddFormatOption(*cmd, args->format);
  cmd->callback([args, &ctx] { RunEstimate(*args, ctx); });
}

}  // namespace memfit::cli
