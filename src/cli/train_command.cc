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

using TrainArgs = RequestArgs<TrainRequest>;

void RunTrain(TrainArgs& args, Context& ctx) {
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  auto answer = AnswerRequest(args, RunTrainRequest);
  if (!answer) return ctx.Fail(answer.error());
  ctx.out << RenderTrainAnswer(*answer, *format, TerminalLayout(args.wide));
}

// The command and its flags, bound to a TrainArgs; the caller sets the callback.
std::shared_ptr<TrainArgs> AddTrainFlags(CLI::App& app, Context& ctx) {
  return AddRequestCommand<TrainRequest>(
      app, ctx, "train", "memory to fine-tune or train the model, per GPU (and CPU RAM when "
                         "offloading), with the peak and the stage where it occurs");
}

}  // namespace

void AddTrainCommand(CLI::App& app, Context& ctx) {
  auto a = AddTrainFlags(app, ctx);
  app.get_subcommand("train")->callback([a, &ctx] { RunTrain(*a, ctx); });
}

Result<TrainRequest> TrainRequestFromFlags(const std::vector<std::string>& args) {
  return RequestFromFlags(AddTrainFlags, "train", args);
}

}  // namespace memfit::cli
