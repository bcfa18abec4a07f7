#include "server/hub_post.h"

#include <filesystem>
#include <fstream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "hub/net/http_client.h"
#include "memfit/hub.h"
#include "formats/json.h"
#include "memfit/local_source.h"

namespace memfit::server {
namespace {

std::mutex g_record_mutex;

bool AlreadyRecorded(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line == key) return true;
  }
  return false;
}

std::string Encode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

}  // namespace

Result<DiscussionResult> PostDiscussion(const DiscussionRequest& request, const std::string& endpoint,
                                        const std::string& record_path) {
  if (!LooksLikeHubId(request.model) || request.model.find('/') == std::string::npos) {
    return MakeError("post: \"{}\" is not a Hub repository id (org/name)", request.model);
  }
  if (request.token.empty()) return MakeError("post: a Hugging Face token is needed to post");
  if (request.description.empty() || request.description.size() > 65536) {
    return MakeError("post: the description must be 1 to 65536 bytes");
  }
  const std::string key = request.model + "@" + request.revision;
  std::lock_guard lock(g_record_mutex);
  if (AlreadyRecorded(record_path, key)) {
    return MakeError("post: already posted for {} at revision {}", request.model, request.revision);
  }
  // The Hub client's own rules (hub/net/http_client.h): the token goes to the endpoint's host
  // only, also after a redirect; one attempt per request, so a discussion is never posted twice.
  HubSettings settings;
  settings.endpoint = endpoint;
  settings.token = request.token;
  settings.max_attempts = 1;
  HubStats stats;
  hubnet::HttpClient client(settings, stats);
  constexpr uint32_t kTimeoutMs = 20'000;
  const std::string url = endpoint + "/api/models/" + Encode(request.model) + "/discussions";
  // The repository's existing discussions: a title from us for this revision means "posted".
  const std::string title = request.title + " (revision " + request.revision + ")";
  auto listing = client.Send({.url = url, .max_body_bytes = 16u << 20, .timeout_ms = kTimeoutMs});
  if (!listing) return MakeError("post: cannot reach {}", endpoint);
  if (listing->status == 200) {
    try {
      auto json = nlohmann::json::parse(listing->body);
      for (const auto& d : json.value("discussions", nlohmann::json::array())) {
        if (d.value("title", "") == title) {
          return MakeError("post: {} already has a discussion titled \"{}\"", request.model, title);
        }
      }
    } catch (const std::exception&) {
      return MakeError("post: the Hub's discussion list was not valid JSON");
    }
  } else if (listing->status == 401 || listing->status == 403 || listing->status == 404) {
    return MakeError("post: the Hub answered {} for {} (check the token and the repository)",
                     listing->status, request.model);
  }
  nlohmann::json body = {{"title", title}, {"description", request.description}};
  auto response = client.Send({.url = url,
                               .max_body_bytes = 1u << 20,
                               .timeout_ms = kTimeoutMs,
                               .post_json = DumpJson(body, -1)});
  if (!response) return MakeError("post: cannot reach {}", endpoint);
  if (response->status != 200 && response->status != 201) {
    return MakeError("post: the Hub answered {} when creating the discussion", response->status);
  }
  std::filesystem::create_directories(std::filesystem::path(record_path).parent_path());
  std::ofstream(record_path, std::ios::app) << key << "\n";
  DiscussionResult result;
  try {
    auto json = nlohmann::json::parse(response->body);
    if (json.contains("num")) {
      result.url = fmt::format("{}/{}/discussions/{}", endpoint, request.model, json["num"].dump());
    }
  } catch (const std::exception&) {
  }
  if (result.url.empty()) result.url = fmt::format("{}/{}/discussions", endpoint, request.model);
  return result;
}

}  // namespace memfit::server
