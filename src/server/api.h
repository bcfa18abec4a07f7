#pragma once
// The JSON API: a request for a command becomes the CLI's own arguments, run with --format json,
// so the API answers exactly what the CLI prints (and the same error messages).

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "memfit/result.h"

namespace memfit::server {

struct ApiResponse {
  int status = 200;
  std::string body;
};

// The commands the API serves.
bool IsApiCommand(std::string_view command);

// {"model": "org/name", "<option>": value, ...} -> ["<command>", "org/name", "--option=value",
// ..., "--format", "json"] (an empty value: "--option", ""). Strings and numbers become one value, true becomes a bare flag, false
// is omitted, arrays repeat the flag. Options that touch the server's disk or print something
// other than JSON (--help, --version) are refused, and so is a model that is a local path or
// starts with '-'.
Result<std::vector<std::string>> ApiArguments(std::string_view command, const nlohmann::json& body);

// The HTTP status of a failed request, from its error's kind: not found 404, gated or private
// 403, the Hub unavailable (offline, unreachable, past the deadline) 503, bad input and
// unsupported models 422.
int StatusFor(ErrorKind kind);

// Runs the command and maps the CLI's exit code to an HTTP status: 0 -> 200, usage error -> 400,
// a failure -> StatusFor(the error's kind). Errors are {"error": "<one line>"}. The server's
// cache and home directories in the output become $HF_HUB_CACHE, $MEMFIT_CACHE, $HF_HOME,
// $XDG_CACHE_HOME and ~.
ApiResponse RunApiCommand(const std::vector<std::string>& args);

// `text` with the server's cache and home directories replaced by $HF_HUB_CACHE, $MEMFIT_CACHE,
// $HF_HOME, $XDG_CACHE_HOME and ~ (whole paths only).
std::string WithoutServerPaths(std::string text);

// {"error": message} with the given status.
ApiResponse ErrorResponse(int status, std::string_view message);

}  // namespace memfit::server
