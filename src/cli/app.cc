#include "cli/app.h"

#include <algorithm>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/options_binding.h"

#include "memfit/suggest.h"

namespace memfit::cli {
namespace {

// "--context: --context -5: expected ..." (CLI11 names the option before a message that already
// does) -> "--context -5: expected ...", the API's words for the same value.
std::string WithoutRepeatedFlag(std::string message) {
  const size_t colon = message.find(": --");
  if (message.starts_with("--") && colon != std::string::npos &&
      message.compare(colon + 2, colon, message, 0, colon) == 0) {
    message.erase(0, colon + 2);
  }
  return message;
}

// An unexpected argument: the first that looks like a flag, with the closest option of the
// command ("unknown option --contxt (did you mean --context?)"); else CLI11's own words.
std::string ExtrasMessage(CLI::App& app, const std::vector<std::string>& args,
                          const CLI::ExtrasError& e) {
  CLI::App* command = nullptr;
  for (CLI::App* sub : app.get_subcommands()) command = sub;
  if (!command && !args.empty()) {
    try {
      command = app.get_subcommand(args[0]);
    } catch (const CLI::Error&) {
      command = nullptr;  // not a command: CLI11's own words below
    }
  }
  std::vector<std::string> names;
  if (command) {
    for (const CLI::Option* o : command->get_options()) {
      for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    }
  }
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!a.starts_with("--")) continue;
    const std::string flag = a.substr(0, a.find('='));
    if (std::find(names.begin(), names.end(), flag) != names.end()) continue;
    return fmt::format("{}unknown option {}{}", command ? command->get_name() + ": " : "", flag,
                       DidYouMean(flag, names));
  }
  return e.what();
}

}  // namespace

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ErrorKind kind = ErrorKind::kBadInput;
  return Run(args, out, err, kind);
}

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        ErrorKind& error_kind) {
  CLI::App app{"memfit: how much memory a model needs to load, serve and train, and where it fits",
               "memfit"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "memfit 0.1.0");
  Context ctx{out, err};
  // When the first argument names a command, only that command is built: parsing then goes the
  // same way, and the server (one run per request) skips building every other command's options.
  struct Command {
    std::string_view name;
    void (*add)(CLI::App&, Context&);
  };
  static constexpr Command kCommands[] = {
      {"estimate-memory", AddEstimateMemoryCommand}, {"inspect", AddInspectCommand},
      {"models", AddModelsCommand}, {"serve", AddServeCommand}, {"fit", AddFitCommand},
      {"gpus", AddGpusCommand}, {"inference", AddInferenceCommand}, {"train", AddTrainCommand},
      {"validate", AddValidateCommand}, {"gguf", AddGgufCommand}};
  const Command* named = nullptr;
  for (const Command& command : kCommands) {
    if (!args.empty() && args[0] == command.name) named = &command;
  }
  std::string names;
  std::vector<std::string> name_list;
  for (const Command& command : kCommands) {
    names += (names.empty() ? "" : ", ") + std::string(command.name);
    name_list.emplace_back(command.name);
  }
  if (!named && !args.empty() && !args[0].starts_with("-")) {
    // A misspelt command gets the closest one; a model named first gets the command to put
    // before it.
    std::string hint = ClosestMatch(args[0], name_list);
    if (!hint.empty()) {
      hint = "; did you mean " + hint + "?";
    } else if (args[0].find('/') != std::string::npos || args[0].ends_with(".json")) {
      hint = "; name a command before the model, e.g. `memfit inference " + args[0] + "`";
    }
    err << "memfit: usage error: unknown command \"" << args[0] << "\"" << hint
        << " (commands: " << names << ")\n";
    err << "run `memfit --help` for the commands and their options\n";
    return 2;
  }
  if (args.empty()) {
    // A newcomer's first try: what to type, not CLI11's "A subcommand is required".
    err << "memfit: usage error: name a command (" << names << "), e.g. `memfit inference "
        << "meta-llama/Llama-3.1-8B --gpu rtx4090`\n";
    err << "run `memfit --help` for the commands and their options\n";
    return 2;
  }
  for (const Command& command : kCommands) {
    if (!named || named == &command) command.add(app, ctx);
  }
  // CLI11 wants argv order reversed in a vector.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    out << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp& e) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return 0;
  } catch (const OptionValueError& e) {
    err << "memfit: error: " << e.what() << "\n";
    error_kind = ErrorKind::kBadInput;
    return 1;
  } catch (const CLI::ValidationError& e) {
    // A value outside its set or range (CLI11's checks from the option table): the same one line
    // as the API's refusal.
    err << "memfit: error: " << WithoutRepeatedFlag(e.what()) << "\n";
    error_kind = ErrorKind::kBadInput;
    return 1;
  } catch (const CLI::ConversionError& e) {
    err << "memfit: error: " << WithoutRepeatedFlag(e.what()) << "\n";
    error_kind = ErrorKind::kBadInput;
    return 1;
  } catch (const CLI::ExtrasError& e) {
    err << "memfit: usage error: " << ExtrasMessage(app, args, e) << "\n";
    err << "run `memfit " << (named ? std::string(named->name) + " " : std::string())
        << "--help` for its options\n";
    return 2;
  } catch (const CLI::ParseError& e) {
    err << "memfit: usage error: " << WithoutRepeatedFlag(e.what()) << "\n";
    err << "run `memfit --help` for the commands and their options\n";
    return 2;
  }
  error_kind = ctx.error_kind;
  return ctx.exit_code;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return Run(args, std::cout, std::cerr);
}

}  // namespace memfit::cli
