// INTERIM RunApi over the server's TypedApiWork (see interim/memfit/api.h).
#include "memfit/api.h"

#include "formats/json.h"
#include "server/answers.h"
#include "server/api.h"

namespace memfit {

ApiReply RunApi(std::string_view command, std::string_view json_body, OutputFormat,
                const ApiSettings& settings) {
  auto body = ParseJson(json_body, "request body");
  if (!body) return {400, server::ErrorResponse(400, body.error().message).body, "usage"};
  nlohmann::json checked = *body;
  std::string model;
  if (settings.allow_local_paths && checked.is_object() && checked.contains("model") &&
      checked["model"].is_string()) {
    model = checked["model"].get<std::string>();
    checked["model"] = "placeholder";
  }
  if (auto status = server::CheckApiBody(command, checked); !status) {
    return {400, server::ErrorResponse(400, status.error().message).body, "usage"};
  }
  if (!model.empty()) checked["model"] = model;
  auto work = server::TypedApiWork(command, checked);
  if (!work) return {400, server::ErrorResponse(400, work.error().message).body, "usage"};
  auto response = (*work)();
  return {response.status, response.body, response.status == 200 ? "" : "bad_input"};
}

}  // namespace memfit
