#pragma once
// One libcurl easy handle with the Hub's rules: redirects followed by hand (Authorization only to
// the endpoint's host), bounded bodies (a server that ignores Range is cut off once the bytes
// asked for have arrived), retries with backoff for 429, 5xx and transport errors, and errors
// mapped from X-Error-Code like huggingface_hub's hf_raise_for_status. Not thread-safe: one per
// thread.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "memfit/hub.h"
#include "memfit/result.h"

namespace memfit::hubnet {

struct HttpRequest {
  std::string url;
  std::optional<std::pair<uint64_t, uint64_t>> range = std::nullopt;  // inclusive [first, last]
  uint64_t max_body_bytes = 64ull << 20;  // without a range: more is an error
  uint32_t timeout_ms = 10'000;
};

struct HttpResponse {
  long status = 0;
  std::string body;  // with a range: exactly the bytes asked for (or fewer at the end of file)
  std::map<std::string, std::string> headers;      // final response, lowercase names
  std::map<std::string, std::string> hub_headers;  // first response (X-Repo-Commit, X-Linked-*)
  std::optional<uint64_t> total_size;  // Content-Range total, X-Linked-Size or Content-Length
  std::string final_url;               // after redirects
};

// What an error message names: repository, revision and file, for X-Error-Code mapping.
struct ErrorContext {
  std::string repo_id;
  std::string revision;
  std::string file;  // empty for API calls
};

class HttpClient {
 public:
  HttpClient(const HubSettings& settings, HubStats& stats);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // GET with retries. `failure` says whether the host could not be reached at all.
  Result<HttpResponse> Get(const HttpRequest& request, const ErrorContext& context,
                           HubFailure* failure = nullptr);

 private:
  struct Attempt;
  Result<HttpResponse> GetOnce(const HttpRequest& request, Attempt& attempt);

  const HubSettings& settings_;
  HubStats& stats_;
  void* curl_;  // CURL*
};

// Makes (on first use) and returns the calling worker thread's client (see parallel.h).
using ClientFactory = std::function<HttpClient&()>;

// The URL without its query string (CDN URLs carry signatures): for messages.
std::string RedactUrl(std::string_view url);

}  // namespace memfit::hubnet
