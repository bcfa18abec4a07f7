#pragma once
// The JSON API's checks and answers shared by every command: which commands it serves, what no
// body may ask for, the status of an error. Each command's body becomes its typed request
// (server/request_json.h) and is answered through server/answers.h, with the bytes
// `memfit <command> --format json` prints.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "memfit/result.h"

namespace memfit::api {

struct ApiResponse {
  int status = 200;
  std::string body;
  ErrorKind kind = ErrorKind::kBadInput;  // of a failed request (status != 200)
  bool fits = true;                       // llama.cpp's fit plan: false when it does not fit
};

// The commands the API serves (memfit/api.h: ApiCommands).
bool IsApiCommand(std::string_view command);

// What every body is checked for before it becomes a request: an object whose option names are
// [a-z][a-z0-9_-]* (at most 40 characters); values strings, numbers, booleans, null or arrays of
// at most 16 scalars, each at most 256 characters on one line; no option that would make the
// server write or read files or print something other than JSON (export-configs, format, output,
// file, help, help-all, version); a "model" that is a non-empty string, no local path (absolute,
// relative, "..", or an existing file) and does not start with '-'.
// With `allow_local_paths` (Python, the browser's in-memory files) "model" may be a local path.
Status CheckApiBody(std::string_view command, const nlohmann::json& body,
                    bool allow_local_paths = false);

// The HTTP status of a failed request, from its error's kind: not found 404, gated or private
// 403, the Hub unavailable (offline, unreachable, past the deadline) 503, bad input and
// unsupported models 422.
int StatusFor(ErrorKind kind);

// `text` with the server's cache and home directories replaced by $HF_HUB_CACHE, $MEMFIT_CACHE,
// $HF_HOME, $XDG_CACHE_HOME and ~ (whole paths only).
std::string WithoutServerPaths(std::string text);

// {"error": message} with the given status.
ApiResponse ErrorResponse(int status, std::string_view message);

}  // namespace memfit::api
