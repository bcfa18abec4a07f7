// `memfit gpus`: the built-in accelerator catalog, filtered by memory and vendor. The flags are a
// GpusRequest's fields (memfit/requests.h), answered by RunGpusRequest.

#include "cli/command.h"
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
  cmd->add_option("--min-memory", args->request.min_memory,
                  "only GPUs with at least this memory (24GiB)");
  cmd->add_option("--vendor", args->request.vendor, "nvidia, amd, apple or intel");
  cmd->add_option("--format", args->format, "table, json, csv or markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
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
