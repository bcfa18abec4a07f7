#pragma once
// One libcurl easy handle with the Hub's rules (GET, and a single POST for the server's Hub
// discussions): redirects followed by hand (Authorization only to
// the endpoint's host), bounded bodies (a server that ignores Range is cut off once the bytes
// asked for have arrived), retries with backoff for 429, 5xx and transport errors, and errors
// mapped from X-Error-Code like huggingface_hub's hf_raise_for_status. Not thread-safe: one per
// thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "hub/net/http_response.h"
#include "memfit/hub.h"
#include "memfit/result.h"

namespace memfit::hubnet {

class HttpClient {
 public:
  HttpClient(const HubSettings& settings, HubStats& stats);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // GET with retries. `failure` says whether the host could not be reached at all (refused, DNS,
  // timed out, or the lookup's deadline passed: kUnreachable).
  Result<HttpResponse> Get(const HttpRequest& request, const ErrorContext& context,
                           HubFailure* failure = nullptr);

  // One attempt, no retry (a POST must not be sent twice), redirects followed as Get follows
  // them: the answer whatever its status. An error only when no answer arrived (or a body over
  // max_body_bytes).
  Result<HttpResponse> Send(const HttpRequest& request);

 private:
  struct Attempt;
  Result<HttpResponse> GetOnce(const HttpRequest& request, Attempt& attempt);

  const HubSettings& settings_;
  HubStats& stats_;
  // settings_.deadline_ms after construction (a client lives for one lookup); max: none.
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  void* curl_;  // CURL*
};

// Makes (on first use) and returns the calling worker thread's client (see parallel.h).
using ClientFactory = std::function<HttpClient&()>;

}  // namespace memfit::hubnet
