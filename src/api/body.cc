#include "api/body.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "formats/json.h"
#include "memfit/local_source.h"

namespace memfit::api {
namespace {

constexpr std::array<std::string_view, 8> kCommands = {
    "estimate-memory", "inspect", "inference", "train", "fit", "gpus", "models", "options"};
// Options that would make the server write files, read local files or change its output form
// (help and version print text instead of JSON).
constexpr std::array<std::string_view, 7> kRefused = {"export-configs", "format", "output", "file",
                                                      "help", "help-all", "version"};

bool ValidOptionName(std::string_view name) {
  if (name.empty() || name.size() > 40 || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return false;
  }
  return true;
}

Result<std::string> ScalarText(const nlohmann::json& value, std::string_view key) {
  std::string text;
  if (value.is_string()) text = value.get<std::string>();
  else if (value.is_number_integer() || value.is_number_unsigned()) text = value.dump();
  else if (value.is_number_float()) text = fmt::format("{}", value.get<double>());
  else return MakeError("option \"{}\": expected a string, a number or a boolean", key);
  if (text.size() > 256 || text.find_first_of("\r\n") != std::string::npos) {
    return MakeError("option \"{}\": value too long or not one line", key);
  }
  return text;
}

// The server's own directories never reach a client: the CLI's messages name the Hugging Face
// cache it looked in ("model not found ... (3) a Hub id in the local Hugging Face cache
// (/home/user/.cache/huggingface/hub)"), which tells a remote client the account and layout.
// Longest first, so the cache under $HOME becomes $HF_HUB_CACHE rather than ~/.cache/... Only
// whole paths: "/root" in "org/rootless" (a model id) is not the home directory.
bool IsPathChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
         c == '~' || c == '/';
}

}  // namespace

std::string WithoutServerPaths(std::string text) {
  std::vector<std::pair<std::string, std::string_view>> paths = {{DefaultHfHubCache(), "$HF_HUB_CACHE"}};
  for (auto [name, shown] : {std::pair{"MEMFIT_CACHE", "$MEMFIT_CACHE"}, {"HF_HOME", "$HF_HOME"},
                             {"XDG_CACHE_HOME", "$XDG_CACHE_HOME"}, {"HOME", "~"}}) {
    if (const char* v = std::getenv(name)) paths.emplace_back(v, shown);
  }
  std::sort(paths.begin(), paths.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [path, shown] : paths) {
    if (path.size() < 2) continue;  // "" or "/": nothing to hide, and every '/' would match
    for (size_t pos = 0; (pos = text.find(path, pos)) != std::string::npos;) {
      const size_t end = pos + path.size();
      const bool whole = (pos == 0 || !IsPathChar(text[pos - 1])) &&
                         (end == text.size() || text[end] == '/' || !IsPathChar(text[end]));
      if (!whole) {
        pos = end;
        continue;
      }
      text.replace(pos, path.size(), shown);
      pos += shown.size();
    }
  }
  return text;
}

int StatusFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNotFound: return 404;
    case ErrorKind::kForbidden: return 403;
    case ErrorKind::kUnavailable: return 503;
    case ErrorKind::kUsage: return 400;
    case ErrorKind::kBadInput:
    case ErrorKind::kUnsupported: return 422;
  }
  return 422;
}

bool IsApiCommand(std::string_view command) {
  return std::find(kCommands.begin(), kCommands.end(), command) != kCommands.end();
}

ApiResponse ErrorResponse(int status, std::string_view message) {
  // One line even when the message quotes the request (a decoded path may hold "\n").
  return {status, DumpJson(nlohmann::json{{"error", OneLine(std::string(message))}})};
}

Status CheckApiBody(std::string_view command, const nlohmann::json& body,
                    bool allow_local_paths) {
  if (!IsApiCommand(command)) return MakeError("unknown command \"{}\"", command);
  if (!body.is_object()) return MakeError("request body must be a JSON object");
  if (auto model = body.find("model"); model != body.end()) {
    if (!model->is_string() || model->get<std::string>().empty()) {
      return MakeError("\"model\" must be a non-empty string");
    }
    const std::string spec = model->get<std::string>();
    std::error_code ec;
    if (!allow_local_paths &&
        (spec.size() > 300 || spec.front() == '/' || spec.front() == '.' ||
         spec.find("..") != std::string::npos || std::filesystem::exists(spec, ec))) {
      return MakeError("\"model\": local paths are not served; use a Hub id or a catalog name");
    }
    // No Hub id or catalog name starts with '-' (the CLI would read it as an option).
    if (spec.front() == '-') return MakeError("\"model\" must not start with '-'");
    if (spec.size() > 4096) return MakeError("\"model\" is longer than 4096 characters");
  }
  for (const auto& [key, value] : body.items()) {
    if (key == "model") continue;
    if (!ValidOptionName(key)) return MakeError("invalid option name \"{}\"", key);
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (std::find(kRefused.begin(), kRefused.end(), flag) != kRefused.end()) {
      return MakeError("option \"{}\" is not available through the API", key);
    }
    if (value.is_boolean() || value.is_null()) continue;
    if (value.is_array()) {
      if (value.size() > 16) return MakeError("option \"{}\": at most 16 values", key);
      for (const auto& item : value) MEMFIT_RETURN_IF_ERROR(ScalarText(item, key));
      continue;
    }
    MEMFIT_RETURN_IF_ERROR(ScalarText(value, key));
  }
  return Ok{};
}

}  // namespace memfit::api
