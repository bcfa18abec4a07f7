// `memfit train MODEL`: per-GPU training memory (plus CPU RAM when offloading) with the peak
// and the stage where it occurs.

#include <sstream>

#include "cli/command.h"
#include "cli/model_loader.h"
#include "cli/options_binding.h"
#include "cli/request_flags.h"
#include "cli/terminal.h"
#include "cli/vocabulary.h"
#include "memfit/context_default.h"
#include "memfit/gpu.h"
#include "memfit/estimate_train.h"
#include "memfit/render_memory.h"
#include "memfit/requests.h"
#include "memfit/units.h"

namespace memfit::cli {
namespace {

// The request's fields are the flags' variables (memfit/requests.h states the defaults).
struct TrainArgs {
  ModelArgs model;
  TrainRequest request;
  std::string format = "table";
  bool wide = false;
};

void RunTrain(TrainArgs& args, Context& ctx) {
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  auto answer = WithQuery(args.model, [&](ModelQuery query) {
    TrainRequest request = args.request;
    request.model = std::move(query);
    return RunTrainRequest(request);
  });
  if (!answer) return ctx.Fail(answer.error());
  ctx.out << RenderTrainAnswer(*answer, *format, TerminalLayout(args.wide));
}

// The command and its flags, bound to a TrainArgs; the caller sets the callback.
std::shared_ptr<TrainArgs> AddTrainFlags(CLI::App& app, Context& ctx) {
  auto a = std::make_shared<TrainArgs>();
  TrainRequest& r = a->request;
  auto* cmd = app.add_subcommand(
      "train", "memory to fine-tune or train the model, per GPU (and CPU RAM when offloading), "
               "with the peak and the stage where it occurs");
  AddModelArgs(*cmd, a->model);
  BindOptions(*cmd, api::Options(r), ctx, &a->model);
  AddFormatOption(*cmd, a->format);
  AddWideFlag(*cmd, a->wide);
  return a;
}

}  // namespace

void AddTrainCommand(CLI::App& app, Context& ctx) {
  auto a = AddTrainFlags(app, ctx);
  app.get_subcommand("train")->callback([a, &ctx] { RunTrain(*a, ctx); });
}

Result<TrainRequest> TrainRequestFromFlags(const std::vector<std::string>& args) {
  CLI::App app;
  std::ostringstream out, err;
  Context ctx{out, err};
  auto a = AddTrainFlags(app, ctx);
  MEMFIT_RETURN_IF_ERROR(ParseFlags(app, "train", args));
  a->request.model = QueryFor(a->model, std::make_shared<bool>(false));
  return a->request;
}

}  // namespace memfit::cli
