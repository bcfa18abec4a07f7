#pragma once
// An HTTP answer from the Hub or its CDN, taken apart without libcurl (pure; every byte of it is
// untrusted): header lines, the body of a ranged or capped request, and the error an answer that
// is not retried becomes (huggingface_hub's hf_raise_for_status, X-Error-Code). HttpClient
// (http_client.h) moves the bytes; this decides what they mean.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "memfit/result.h"

namespace memfit::hubnet {

struct HttpRequest {
  std::string url;
  std::optional<std::pair<uint64_t, uint64_t>> range = std::nullopt;  // inclusive [first, last]
  uint64_t max_body_bytes = 64ull << 20;  // without a range: more is an error
  uint32_t timeout_ms = 10'000;
  // POST this body (Content-Type: application/json) instead of GET. A 301, 302 or 303 answer
  // turns it into a GET of the new location, as curl and browsers do; 307 and 308 keep it.
  std::optional<std::string> post_json = std::nullopt;
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

// The URL without its query string (CDN URLs carry signatures): for messages.
std::string RedactUrl(std::string_view url);

// One line of an answer's header block as libcurl hands it over: a status line ("HTTP/1.1 302
// Found") starts a new answer (after a redirect) and clears `headers`; "Name: value" is kept
// with a lowercase name and the value trimmed (a repeated name: the last one); anything else is
// ignored.
void AddHeaderLine(std::string_view line, std::map<std::string, std::string>& headers);

// A final 2xx answer to `request` as the client returns it. With a range: a 206 must hold the
// range asked for (its Content-Range starts at the first byte asked), a 200 (a server that
// ignores Range) is cut to the window from the first byte asked. Without a range, a `capped`
// body (more than max_body_bytes arrived) is an error. total_size: Content-Range's total, else
// (no range) Content-Length, else the first answer's X-Linked-Size.
Result<HttpResponse> FinishResponse(const HttpRequest& request, std::string final_url, long status,
                                    std::map<std::string, std::string> headers,
                                    std::map<std::string, std::string> hub_headers,
                                    std::string body, bool capped);

// 429 and the 5xx answers a retry may cure (500, 502, 503, 504).
bool IsRetryableStatus(long status);

// The error for an answer that is neither 2xx nor retried: X-Error-Code GatedRepo, RepoNotFound
// (or any 401), RevisionNotFound, EntryNotFound as huggingface_hub names them, then 403, 404 and
// the rest with X-Error-Message. `shown_url` is already redacted; `token_sent` picks the hint.
Error HubStatusError(long status, const std::map<std::string, std::string>& headers,
                     const ErrorContext& context, std::string_view endpoint, bool token_sent,
                     std::string_view shown_url);

}  // namespace memfit::hubnet
