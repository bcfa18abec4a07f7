#pragma once
// Until memfit/api.h (the lead's src/api/ module) is on this branch: the same declarations,
// implemented in api_fallback.cc on server::TypedApiWork (JSON) and cli::Run (text formats).
// Deleted when memfit/api.h arrives; module.cc includes whichever exists.

#include <string>
#include <string_view>
#include <vector>

#include "memfit/render.h"

namespace memfit {

struct ApiReply {
  int status = 200;
  std::string body;
  std::string error_kind;
  bool fits = true;
};

struct ApiSettings {
  bool allow_local_paths = false;
};

ApiReply RunApi(std::string_view command, std::string_view json_body,
                OutputFormat format = OutputFormat::kJson, const ApiSettings& settings = {});
const std::vector<std::string>& ApiCommands();
std::string ApiOptionsJson();

}  // namespace memfit
