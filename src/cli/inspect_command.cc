// `memfit inspect MODEL`: tensors grouped by module, dtype histogram, parameter count. The flags
// are an InspectRequest's fields (memfit/requests.h), answered by RunInspectRequest.

#include "cli/command.h"
#include "cli/options_binding.h"
#include "cli/model_loader.h"
#include "memfit/render.h"
#include "memfit/requests.h"

namespace memfit::cli {

void AddInspectCommand(CLI::App& app, Context& ctx) {
  struct Args {
    ModelArgs model;
    InspectRequest request;
    std::string format = "table";
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("inspect", "tensors grouped by module, dtypes, parameter count");
  AddModelArgs(*cmd, args->model);
  BindOptions(*cmd, api::Options(args->request), ctx, &args->model);
  AddFormatOption(*cmd, args->format);
  cmd->callback([args, &ctx] {
    auto answer = WithQuery(args->model, [&](ModelQuery query) {
      InspectRequest request = args->request;
      request.model = std::move(query);
      return RunInspectRequest(request);
    });
    if (!answer) return ctx.Fail(answer.error());
    ctx.out << RenderInspect(answer->model->model(), *ParseOutputFormat(args->format), answer->depth);
  });
}

}  // namespace memfit::cli
