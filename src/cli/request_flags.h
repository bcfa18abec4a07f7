#pragma once
// The typed request a command builds from its flags, without running it: for the tests that check
// that `memfit validate`'s rows (memfit/validation.h) and the API's bodies build the same request
// as the CLI.

#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "cli/model_loader.h"
#include "cli/options_binding.h"
#include "memfit/requests.h"
#include "memfit/result.h"

namespace memfit::cli {

// `memfit train|inference ARGS...` (`args`: what follows the command's name, MODEL first). A flag
// error is CLI11's message. MODEL's flags and the library versions are in the request.
Result<TrainRequest> TrainRequestFromFlags(const std::vector<std::string>& args);
Result<InferenceRequest> InferenceRequestFromFlags(const std::vector<std::string>& args);

// Parses `args` as the arguments of `app`'s subcommand `command`, without running its callback.
Status ParseFlags(CLI::App& app, const std::string& command, const std::vector<std::string>& args);

// The request the request command `command` (AddRequestCommand) builds from `args`, not run.
template <typename Request>
Result<Request> RequestFromFlags(const std::string& command, const std::string& help,
                                 const std::vector<std::string>& args) {
  CLI::App app;
  std::ostringstream out, err;
  Context ctx{out, err};
  auto a = AddRequestCommand<Request>(app, ctx, command, help);
  MEMFIT_RETURN_IF_ERROR(ParseFlags(app, command, args));
  a->request.model = QueryFor(a->model, std::make_shared<bool>(false));
  return a->request;
}

}  // namespace memfit::cli
