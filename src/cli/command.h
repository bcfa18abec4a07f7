#pragma once
// What every subcommand shares: where to print, and the exit code it leaves.

#include <functional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "memfit/result.h"

namespace memfit::cli {

struct Context {
  std::ostream& out;
  std::ostream& err;
  int exit_code = 0;
  ErrorKind error_kind = ErrorKind::kBadInput;  // of the error reported, for the server's status
  // Reports an error as one line "memfit: error: <message>" and sets exit code 1.
  void Fail(const Error& error) {
    err << "memfit: error: " << error.message << "\n";
    exit_code = 1;
    error_kind = error.kind;
  }
  void Note(const std::string& message) { err << "memfit: " << message << "\n"; }
};

// Each subcommand registers itself on the app; its callback runs when it is chosen.
void AddEstimateMemoryCommand(CLI::App& app, Context& ctx);
void AddInspectCommand(CLI::App& app, Context& ctx);
void AddModelsCommand(CLI::App& app, Context& ctx);
void AddServeCommand(CLI::App& app, Context& ctx);
void AddFitCommand(CLI::App& app, Context& ctx);
void AddGpusCommand(CLI::App& app, Context& ctx);
void AddInferenceCommand(CLI::App& app, Context& ctx);
void AddTrainCommand(CLI::App& app, Context& ctx);
void AddValidateCommand(CLI::App& app, Context& ctx);
void AddGgufCommand(CLI::App& app, Context& ctx);  // cli/llamacpp_cli.cc

}  // namespace memfit::cli
