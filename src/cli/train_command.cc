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
  auto write = [&](const TrainAnswer& answer, OutputFormat format) {
    ctx.out << RenderTrainAnswer(answer, format, TerminalLayout(args.wide));
  };
  RunRequestCommand(args, ctx, RunTrainRequest, write);
}

constexpr char kTrainHelp[] = "memory to fine-tune or train the model, per GPU (and CPU RAM when "
                              "offloading), with the peak and the stage where it occurs";

}  // namespace

void AddTrainCommand(CLI::App& app, Context& ctx) {
  AddRequestCommand<TrainRequest>(app, ctx, "train", kTrainHelp, RunTrain);
}

Result<TrainRequest> TrainRequestFromFlags(const std::vector<std::string>& args) {
  return RequestFromFlags<TrainRequest>("train", kTrainHelp, args);
}

}  // namespace memfit::cli
