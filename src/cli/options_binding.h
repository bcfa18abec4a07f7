#pragma once
// The CLI's flags from the option table (api/options.h): each option of a request becomes a flag
// with its names, help (unit, values and default), and the same checks the API runs, so a
// spelling, a default or an error is the same in every front end.

#include <stdexcept>
#include <vector>

#include <CLI/CLI.hpp>

#include "api/options.h"
#include "cli/command.h"
#include "cli/model_loader.h"

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

}  // namespace memfit::cli
