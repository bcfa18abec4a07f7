#include "cli/options_binding.h"

#include <memory>
#include <string>

#include <fmt/format.h>

namespace memfit::cli {
namespace {

// Old spellings that still work with a note: the option's alias -> the name to use.
bool IsDeprecated(std::string_view alias) { return alias == "seq"; }

std::string FlagNames(const api::Option& o) {
  std::string names;
  if (!o.short_name.empty()) names = "-" + std::string(o.short_name);
  for (std::string_view n : o.names) {
    if (IsDeprecated(n)) continue;
    names += (names.empty() ? "--" : ",--") + std::string(n);
  }
  return names;
}

std::string HelpOf(const api::Option& o) {
  std::string help(o.help);
  if (!o.choices.empty() && o.kind == api::ValueKind::kPlain) {
    help += " (";
    for (size_t i = 0; i < o.choices.size(); ++i) help += (i ? ", " : "") + std::string(o.choices[i]);
    help += ")";
  }
  if (!o.unit.empty() && o.unit != "bytes") help += " [" + std::string(o.unit) + "]";
  return help;
}

// Retargets MODEL's flags to the CLI's ModelArgs (same fields as the request's ModelQuery).
void Retarget(api::Option& o, ModelArgs* model) {
  if (!model || o.group != "model") return;
  if (o.names[0] == "revision") o.target = &model->revision;
  else if (o.names[0] == "offline") o.target = &model->offline;
  else if (o.names[0] == "token") o.target = &model->token;
  else if (o.names[0] == "gguf-file") o.target = &model->gguf_file;
}

// Counts as CLI11 would read them wrap "-5" around to 2^64 - 5: a count's text is parsed by the
// table's ParseCount first and handed on as plain digits ("128K" tokens -> "131072").
CLI::Validator CountText(const api::Option& o) {
  return CLI::Validator(
      [o](std::string& text) -> std::string {
        auto count = api::ParseCount(o, text);
        if (!count) return count.error().message;
        text = std::to_string(*count);
        return std::string();
      },
      "", "COUNT");
}

}  // namespace

void BindOptions(CLI::App& cmd, std::vector<api::Option> options, Context& ctx, ModelArgs* model) {
  auto bound = std::make_shared<std::vector<std::pair<api::Option, CLI::Option*>>>();
  for (api::Option& o : options) {
    Retarget(o, model);
    const std::string names = FlagNames(o);
    const std::string help = HelpOf(o);
    CLI::Option* flag = nullptr;
    if (auto* b = std::get_if<bool*>(&o.target)) {
      flag = cmd.add_flag(names, **b, help);
    } else if (auto* u = std::get_if<uint64_t*>(&o.target)) {
      flag = cmd.add_option(names, **u, help)->transform(CountText(o));
      if (**u != 0 || o.min == 0) flag->capture_default_str();
    } else if (auto* d = std::get_if<double*>(&o.target)) {
      flag = cmd.add_option(names, **d, help);
      if (**d >= 0) flag->capture_default_str();
    } else if (auto* s = std::get_if<std::string*>(&o.target)) {
      flag = cmd.add_option(names, **s, help);
      if (!(*s)->empty()) flag->capture_default_str();
    } else if (auto* list = std::get_if<std::vector<std::string>*>(&o.target)) {
      flag = cmd.add_option(names, **list, help);
    }
    for (std::string_view alias : o.names) {
      if (!IsDeprecated(alias)) continue;
      const std::string old_flag = "--" + std::string(alias);
      const std::string use = "--" + std::string(o.names[0]);
      if (auto* u = std::get_if<uint64_t*>(&o.target)) {
        cmd.add_option(old_flag, **u)->group("")->check(CountText(o))->each(
            [&ctx, old_flag, use](const std::string&) { ctx.Note(old_flag + " is deprecated: use " + use); });
      }
    }
    bound->emplace_back(o, flag);
  }
  // After parsing: the API's checks on each option given, as the API's one-line error.
  cmd.parse_complete_callback([bound, &cmd] {
    for (const auto& [option, flag] : *bound) {
      bool given = flag && flag->count() > 0;
      for (std::string_view alias : option.names) {
        if (!IsDeprecated(alias)) continue;
        if (CLI::Option* old = cmd.get_option_no_throw("--" + std::string(alias))) {
          given = given || old->count() > 0;
        }
      }
      if (!given) continue;
      if (auto checked = api::CheckOption(option); !checked) {
        throw OptionValueError(checked.error().message);
      }
    }
  });
}

void AddFormatOption(CLI::App& cmd, std::string& format) {
  cmd.add_option("--format", format, "table, json, csv or markdown")
      ->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
}

}  // namespace memfit::cli
