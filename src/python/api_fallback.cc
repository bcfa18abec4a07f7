// See api_fallback.h: RunApi over server::TypedApiWork until memfit/api.h is on this branch.

#include "python/api_fallback.h"

#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "server/answers.h"
#include "server/request_json.h"

namespace memfit {
namespace {

std::string KindOfStatus(int status) {
  switch (status) {
    case 200: return "";
    case 400: return "usage";
    case 403: return "forbidden";
    case 404: return "not_found";
    case 503: return "unavailable";
    default: return "bad_input";
  }
}

std::string KindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadInput: return "bad_input";
    case ErrorKind::kNotFound: return "not_found";
    case ErrorKind::kForbidden: return "forbidden";
    case ErrorKind::kUnavailable: return "unavailable";
    case ErrorKind::kUnsupported: return "unsupported";
  }
  return "bad_input";
}

std::string ErrorBody(std::string_view message) {
  return nlohmann::json{{"error", message}}.dump();
}

// The CLI's text for the body: its keys as flags, in process.
ApiReply RunText(std::string_view command, const nlohmann::json& body, OutputFormat format) {
  std::vector<std::string> args{std::string(command)};
  if (body.contains("model")) args.push_back(body["model"].get<std::string>());
  for (const auto& [key, value] : body.items()) {
    if (key == "model") continue;
    auto add = [&](const nlohmann::json& v) {
      if (v.is_boolean()) {
        if (v.get<bool>()) args.push_back("--" + key);
      } else if (!v.is_null()) {
        args.push_back("--" + key);
        args.push_back(v.is_string() ? v.get<std::string>() : v.dump());
      }
    };
    if (value.is_array()) {
      for (const auto& v : value) add(v);
    } else {
      add(value);
    }
  }
  args.push_back("--format");
  args.push_back(format == OutputFormat::kCsv        ? "csv"
                 : format == OutputFormat::kMarkdown ? "markdown"
                                                     : "table");
  std::ostringstream out, err;
  ErrorKind kind = ErrorKind::kBadInput;
  int code = cli::Run(args, out, err, kind);
  if (code == 0 || (code == 1 && !out.str().empty())) return {200, out.str(), "", code == 0};
  std::string message = err.str();
  while (!message.empty() && message.back() == '\n') message.pop_back();
  if (auto nl = message.rfind('\n'); nl != std::string::npos) message = message.substr(nl + 1);
  for (std::string_view prefix : {"memfit: ", "error: ", "usage error: "}) {
    if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
  }
  if (code == 2) return {400, ErrorBody(message), "usage"};
  int status = kind == ErrorKind::kNotFound      ? 404
               : kind == ErrorKind::kForbidden   ? 403
               : kind == ErrorKind::kUnavailable ? 503
                                                 : 422;
  return {status, ErrorBody(message), KindName(kind)};
}

}  // namespace

ApiReply RunApi(std::string_view command, std::string_view json_body, OutputFormat format,
                const ApiSettings& /*settings*/) {
  nlohmann::json body = nlohmann::json::parse(json_body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return {400, ErrorBody("the body is not a JSON object"), "usage"};
  }
  if (command == "options") return {200, ApiOptionsJson(), ""};
  if (format != OutputFormat::kJson) return RunText(command, body, format);
  auto work = server::TypedApiWork(command, body);
  if (!work) return {400, ErrorBody(work.error().message), "usage"};
  server::ApiResponse response = (*work)();
  // The server's answer hides its own paths ($HF_HUB_CACHE, ~); the CLI's message does not.
  if (response.status != 200) {
    ApiReply text = RunText(command, body, OutputFormat::kTable);
    if (!text.error_kind.empty()) return text;
  }
  ApiReply reply{response.status, response.body, KindOfStatus(response.status)};
  if (response.status == 200) {
    auto parsed = nlohmann::json::parse(response.body, nullptr, false);
    if (parsed.is_object() && parsed.contains("fits") && parsed["fits"].is_boolean()) {
      reply.fits = parsed["fits"].get<bool>();
    }
  }
  return reply;
}

const std::vector<std::string>& ApiCommands() {
  static const std::vector<std::string> commands = {"estimate-memory", "inspect", "inference",
                                                    "train", "fit", "gpus", "models", "options"};
  return commands;
}

// {"commands": {command: [{"name", "aliases", "type", "help"}]}} from the server's field tables.
std::string ApiOptionsJson() {
  const nlohmann::json schemas = server::RequestBodySchemas();
  const std::vector<std::pair<std::string, std::string>> names = {
      {"estimate-memory", "LoadRequest"}, {"inspect", "InspectRequest"},
      {"inference", "InferenceRequest"},  {"train", "TrainRequest"},
      {"fit", "FitRequest"},              {"gpus", "GpusRequest"},
      {"models", "ModelsRequest"}};
  nlohmann::json commands = nlohmann::json::object();
  for (const auto& [command, schema_name] : names) {
    nlohmann::json options = nlohmann::json::array();
    std::map<std::string, size_t> index;
    const nlohmann::json& properties = schemas[schema_name]["properties"];
    for (const auto& [key, property] : properties.items()) {
      std::string description = property.value("description", "");
      if (description.rfind("alias of \"", 0) == 0) continue;
      std::string type = property.value("type", "");
      std::string kind = type == "integer" ? "count"
                         : type == "number" ? "number"
                         : type == "boolean" ? "flag"
                         : property.contains("oneOf") ? "list"
                                                      : "text";
      index[key] = options.size();
      options.push_back({{"name", key}, {"aliases", nlohmann::json::array()}, {"type", kind},
                         {"help", description}});
    }
    for (const auto& [key, property] : properties.items()) {
      std::string description = property.value("description", "");
      if (description.rfind("alias of \"", 0) != 0) continue;
      std::string target = description.substr(10, description.size() - 11);
      if (auto it = index.find(target); it != index.end()) {
        options[it->second]["aliases"].push_back(key);
      }
    }
    commands[command] = options;
  }
  return nlohmann::json{{"schema", "memfit.options/v1"}, {"commands", commands}}.dump();
}

}  // namespace memfit
