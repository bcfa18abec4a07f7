#pragma once
// The CLI's flags from the option table (api/options.h): each option of a request becomes a flag
// with its names, help (unit, values and default), and the same checks the API runs, so a
// spelling, a default or an error is the same in every front end.

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "api/options.h"
#include "cli/command.h"
#include "cli/model_loader.h"
#include "cli/terminal.h"
#include "memfit/render.h"

namespace memfit::cli {

// A value outside an option's type, set or range, with the API's message (names the flag).
struct OptionValueError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Binds `options` (bound to a request held by the caller for as long as `cmd` lives) to `cmd`.
// MODEL's flags (--revision, --offline, --token, --gguf-file) are bound to `model` when given, so
// the CLI's Hub progress and summary lines keep working. After parsing, each option given is
// checked (api::CheckOption); a failure throws OptionValueError, which `memfit` reports as one
// line "memfit: error: MESSAGE" with exit 1, like every other bad value. Deprecated
// aliases (train's --seq) print a one-line note when used.
void BindOptions(CLI::App& cmd, std::vector<api::Option> options, Context& ctx,
                 ModelArgs* model = nullptr);

// --format, the CLI's own option: table, json, csv or markdown.
void AddFormatOption(CLI::App& cmd, std::string& format);

// What a request command's flags fill: MODEL's flags, the request (its fields are the flags'
// variables; memfit/requests.h states the defaults), --format and --wide.
template <typename Request>
struct RequestArgs {
  ModelArgs model;
  Request request;
  std::string format = "table";
  bool wide = false;
};

// The subcommand `name` of a request (inference, train, fit): MODEL's flags, the request's
// option-table flags, --format and --wide, bound to the RequestArgs returned; the caller sets the
// callback.
template <typename Request>
std::shared_ptr<RequestArgs<Request>> AddRequestCommand(CLI::App& app, Context& ctx,
                                                        const std::string& name,
                                                        const std::string& help) {
  auto a = std::make_shared<RequestArgs<Request>>();
  auto* cmd = app.add_subcommand(name, help);
  AddModelArgs(*cmd, a->model);
  BindOptions(*cmd, api::Options(a->request), ctx, &a->model);
  AddFormatOption(*cmd, a->format);
  AddWideFlag(*cmd, a->wide);
  return a;
}

// The same subcommand, run by `run(args, ctx)`.
template <typename Request>
void AddRequestCommand(CLI::App& app, Context& ctx, const std::string& name,
                       const std::string& help, void (*run)(RequestArgs<Request>&, Context&)) {
  auto a = AddRequestCommand<Request>(app, ctx, name, help);
  app.get_subcommand(name)->callback([a, &ctx, run] { run(*a, ctx); });
}

// `run(request)` on the flags' request with MODEL's query in it (a progress line left open is
// ended): the command's answer, or its error.
template <typename Request, typename Run>
auto AnswerRequest(const RequestArgs<Request>& args, Run run) {
  return WithQuery(args.model, [&](ModelQuery query) {
    Request request = args.request;
    request.model = std::move(query);
    return run(request);
  });
}

// A request command's run: --format read, the request answered by `run`, and the answer written
// by `write(answer, format)`; a bad --format or a failed answer is the command's error.
template <typename Request, typename Run, typename Write>
void RunRequestCommand(const RequestArgs<Request>& args, Context& ctx, Run run, Write write) {
  auto format = ParseOutputFormat(args.format);
  if (!format) return ctx.Fail(format.error());
  auto answer = AnswerRequest(args, run);
  if (!answer) return ctx.Fail(answer.error());
  write(*answer, *format);
}

}  // namespace memfit::cli
