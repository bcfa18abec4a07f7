// RunApi: a command and its JSON body -> the typed request -> the answer, for every front end
// (the server's router runs the same steps with its cache and slots around them).

#include "memfit/api.h"

#include "api/answers.h"
#include "api/body.h"
#include "formats/json.h"

namespace memfit {
namespace {

std::string KindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadInput: return "bad_input";
    case ErrorKind::kNotFound: return "not_found";
    case ErrorKind::kForbidden: return "forbidden";
    case ErrorKind::kUnavailable: return "unavailable";
    case ErrorKind::kUnsupported: return "unsupported";
    case ErrorKind::kUsage: return "usage";
  }
  return "bad_input";
}

ApiReply UsageReply(std::string_view message) {
  api::ApiResponse r = api::ErrorResponse(400, message);
  return {r.status, std::move(r.body), "usage", true};
}

}  // namespace

const std::vector<std::string>& ApiCommands() {
  static const std::vector<std::string> commands = {"estimate-memory", "inspect", "inference",
                                                    "train", "fit", "gpus", "models", "options"};
  return commands;
}

ApiReply RunApi(std::string_view command, std::string_view json_body, OutputFormat format,
                const ApiSettings& settings) {
  if (!api::IsApiCommand(command)) {
    return UsageReply("unknown command \"" + std::string(command) + "\"");
  }
  // The server's transport bounds a body's size; here the same bound (1 MiB) is checked before
  // parsing, and the parser bounds its depth.
  if (json_body.size() > (size_t{1} << 20)) return UsageReply("request body is larger than 1 MiB");
  auto parsed = ParseJson(json_body.empty() ? std::string_view("{}") : json_body, "request body");
  if (!parsed) return UsageReply(parsed.error().message);
  const nlohmann::json& body = *parsed;
  if (!body.is_object()) return UsageReply("request body must be a JSON object");
  if (auto checked = api::CheckApiBody(command, body, settings.allow_local_paths); !checked) {
    return UsageReply(checked.error().message);
  }
  auto work = api::TypedApiWork(command, body, format);
  if (!work && work.error().kind == ErrorKind::kUsage) return UsageReply(work.error().message);
  if (!work) {
    api::ApiResponse r = api::ErrorResponse(api::StatusFor(work.error().kind), work.error().message);
    return {r.status, std::move(r.body), KindName(work.error().kind), false};
  }
  api::ApiResponse response = (*work)();
  ApiReply reply{response.status, std::move(response.body), "", response.fits};
  if (response.status != 200) reply.error_kind = KindName(response.kind);
  return reply;
}

}  // namespace memfit
