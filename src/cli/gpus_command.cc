// `memfit gpus`: the built-in accelerator catalog, filtered by memory and vendor. The flags are a
// GpusRequest's fields (memfit/requests.h), answered by RunGpusRequest.

#include "cli/command.h"
#include "cli/options_binding.h"
#include "cli/terminal.h"
#include "memfit/render_fit.h"
#include "memfit/requests.h"

namespace memfit::cli {

void AddGpusCommand(CLI::App& app, Context& ctx) {
  struct Args {
    GpusRequest request;
    std::string format = "table";
    bool wide = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "gpus", "the built-in GPU catalog: memory, bandwidth, dense bf16 TFLOPS and their source");
  BindOptions(*cmd, api::Options(args->request), ctx);
  AddFormatOption(*cmd, args->format);
  AddWideFlag(*cmd, args->wide);
  cmd->callback([args, &ctx] {
    auto selected = RunGpusRequest(args->request);
    if (!selected) return ctx.Fail(selected.error());
    auto format = ParseOutputFormat(args->format);
    if (!format) return ctx.Fail(format.error());
    ctx.out << RenderGpuList(*selected, *format, TerminalLayout(args->wide));
    if (selected->empty()) ctx.Note("no GPU in the catalog matches these filters");
  });
}

}  // namespace memfit::cli
