#pragma once
// INTERIM: the lead's include/memfit/api.h (src/api/) is not in main yet; this declares the same
// RunApi so the engine builds against it, implemented in src/wasm/interim/api_interim.cc over
// memfit::server::TypedApiWork. Deleted once src/api lands.

#include <string>
#include <string_view>
#include <vector>

#include "memfit/render.h"

namespace memfit {
struct ApiReply {
  int status = 200;
  std::string body;
  std::string error_kind;
};
struct ApiSettings {
  bool allow_local_paths = false;
};
ApiReply RunApi(std::string_view command, std::string_view json_body,
                OutputFormat format = OutputFormat::kJson, const ApiSettings& settings = {});
}  // namespace memfit
