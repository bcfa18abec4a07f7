#include "server/model_search.h"

#include "hub/net/http_client.h"
#include "memfit/hub.h"
#include "formats/json.h"

namespace memfit::server {

std::string HubSearchUrl(std::string_view endpoint, std::string_view text) {
  return fmt::format("{}/api/models?search={}&limit={}&sort=downloads&direction=-1", endpoint,
                     PercentEncodeSegment(text), kHubSearchLimit);
}

Result<nlohmann::json> ParseHubModelList(std::string_view body) {
  // A listing is small; the bounded parser keeps a hostile answer from nesting without end.
  MEMFIT_ASSIGN_OR_RETURN(nlohmann::json list, ParseJson(body, "hub search answer"));
  if (!list.is_array()) {
    return MakeError("hub search answer: expected an array, got {}", JsonTypeName(list));
  }
  auto count = [](const nlohmann::json& item, const char* key) -> uint64_t {
    auto it = item.find(key);
    if (it == item.end() || !it->is_number_integer()) return 0;
    return it->is_number_unsigned() || it->get<int64_t>() >= 0 ? it->get<uint64_t>() : 0;
  };
  nlohmann::json models = nlohmann::json::array();
  for (const auto& item : list) {
    if (models.size() >= static_cast<size_t>(kHubSearchLimit)) break;
    if (!item.is_object()) continue;
    auto id = item.find("id");
    if (id == item.end() || !id->is_string() || id->get<std::string>().empty()) continue;
    auto tag = item.find("pipeline_tag");
    models.push_back({{"id", id->get<std::string>()},
                      {"downloads", count(item, "downloads")},
                      {"likes", count(item, "likes")},
                      {"pipeline_tag", tag != item.end() && tag->is_string() ? tag->get<std::string>() : ""}});
  }
  return models;
}

ApiResponse SearchHubModels(const std::multimap<std::string, std::string>& params) {
  auto it = params.find("search");
  const std::string text = it == params.end() ? "" : it->second;
  if (text.empty() || text.size() > kHubSearchMaxChars ||
      text.find_first_of("\r\n") != std::string::npos) {
    return ErrorResponse(400, fmt::format("hub search: \"search\" must be 1 to {} characters on one line",
                                          kHubSearchMaxChars));
  }
  const HubSettings settings = HubSettingsFromEnvironment();
  if (settings.offline) {
    return ErrorResponse(400, "hub search: the server runs offline (HF_HUB_OFFLINE)");
  }
  HubStats stats;
  hubnet::HttpClient client(settings, stats);
  auto answer = client.Get({.url = HubSearchUrl(settings.endpoint, text),
                            .max_body_bytes = 4ull << 20,
                            .timeout_ms = settings.metadata_timeout_ms},
                           {});
  if (!answer) return ErrorResponse(502, "hub search: " + answer.error().message);
  auto models = ParseHubModelList(answer->body);
  if (!models) return ErrorResponse(502, models.error().message);
  return {200, DumpJson(nlohmann::json{{"models", std::move(*models)}}, -1)};
}

}  // namespace memfit::server
