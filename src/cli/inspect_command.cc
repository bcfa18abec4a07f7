// `memfit inspect MODEL`: tensors grouped by module, dtype histogram, parameter count.

#include "cli/command.h"
#include "cli/model_loader.h"
#include "memfit/render.h"

namespace memfit::cli {

void AddInspectCommand(CLI::App& app, Context& ctx) {
  struct Args {
    ModelArgs model;
    int depth = 3;
    std::string format = "table";
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("inspect", "tensors grouped by module, dtypes, parameter count");
  AddModelArgs(*cmd, args->model);
  cmd->add_option("--depth", args->depth, "module depth to group by (numbered layers merge)")
      ->check(CLI::Range(1, 16));
  cmd->add_option("--format", args->format, "table, json, csv or markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
  cmd->callback([args, &ctx] {
    auto model = LoadSharedModel(args->model, {});
    if (!model) return ctx.Fail(model.error());
    ctx.out << RenderInspect((*model)->model(), *ParseOutputFormat(args->format), args->depth);
  });
}

}  // namespace memfit::cli
