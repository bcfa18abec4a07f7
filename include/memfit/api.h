#pragma once
// The one way in for every front end that speaks the API's words: the server (POST
// /api/v1/<command>), the Python module and the browser's WebAssembly engine. A command and its
// JSON body (keys = the CLI's long flags, "model" = MODEL) become the command's typed request
// (memfit/requests.h), run by the library, rendered as the API's JSON or as the CLI's text.
// The option table behind the body's keys is the same one the CLI's flags come from
// (src/api/options.h).

#include <string>
#include <string_view>
#include <vector>

#include "memfit/render.h"

namespace memfit {

struct ApiReply {
  int status = 200;        // the HTTP status the server gives: 200, 400 (usage: an unknown
                           // option, one given twice), 403, 404, 422 (a value refused), 503
  std::string body;        // json: exactly POST /api/v1/<command>'s body; an error: {"error": "..."}
                           // (in every format)
  std::string error_kind;  // "" on success, else "usage", "bad_input", "not_found", "forbidden",
                           // "unavailable" or "unsupported"
  bool fits = true;        // llama.cpp's fit: false when the plan does not fit (the CLI exits 1)
};

struct ApiSettings {
  bool allow_local_paths = false;  // the server refuses local paths; Python and the browser not
};

// command: estimate-memory, inspect, inference, train, fit, gpus, models, options.
// json_body: the API's JSON object. format: json (the API's body), table, csv or markdown (the
// CLI's text for the same request).
ApiReply RunApi(std::string_view command, std::string_view json_body,
                OutputFormat format = OutputFormat::kJson, const ApiSettings& settings = {});

// The commands RunApi answers, in the order of `memfit --help`.
const std::vector<std::string>& ApiCommands();

// The option table as JSON: {"schema": "memfit.options/v1", "commands": {"inference": [{"name":
// "context", "aliases": [...], "type": "count|number|text|flag|list|size|gpu|gpus", "default": ...,
// "unit": "tokens", "help": "...", "choices": [...]}, ...], ...}}; also RunApi("options", "{}").
std::string ApiOptionsJson();

}  // namespace memfit
