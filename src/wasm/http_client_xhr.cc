// The Hub's HTTP transport in the browser (the wasm build's replacement for hub/net/http_client.cc,
// chosen by CMake): a synchronous XMLHttpRequest inside the engine's Web Worker, which supports
// Range requests and binary bodies. Everything above it (file choice, Hub API parsing, response
// checks, the cache) is the native code. What differs from libcurl, all set by the browser:
// - redirects are followed by the browser; the Authorization header is sent only when the URL's
//   origin is the endpoint's (a redirect to the CDN keeps it out only if the browser drops it on
//   a cross-origin redirect, as current browsers do);
// - only the headers the server exposes to scripts (Access-Control-Expose-Headers) are readable,
//   and the first answer's headers are the final answer's;
// - a cross-origin read the server does not allow (no CORS headers) looks exactly like an
//   unreachable host: status 0. The message says both;
// - a server that ignores Range sends the whole file, and a synchronous request cannot be cut off:
//   the answer is then cut to the window asked for, after the browser has read it.
// In Node (the parity test) there is no XMLHttpRequest: every request is "unreachable".

#include <emscripten.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "hub/net/http_client.h"
#include "hub/net/hub_api.h"

// Sends one request; returns the HTTP status, 0 when no answer came (network error, CORS refusal
// or no XMLHttpRequest), -1 on timeout. The answer's body and headers wait in JS for the two
// calls below.
EM_JS(int, memfit_xhr_send,
      (const char* method, const char* url, const char* range, const char* token,
       const char* post_body, int timeout_ms),
      {
        Module.memfitXhr = null;
        if (typeof XMLHttpRequest === 'undefined') return 0;
        const xhr = new XMLHttpRequest();
        try {
          xhr.open(UTF8ToString(method), UTF8ToString(url), false);
          xhr.responseType = 'arraybuffer';
          if (timeout_ms > 0) xhr.timeout = timeout_ms;
          const r = UTF8ToString(range);
          if (r) xhr.setRequestHeader('Range', r);
          const t = UTF8ToString(token);
          if (t) xhr.setRequestHeader('Authorization', 'Bearer ' + t);
          const body = UTF8ToString(post_body);
          if (body) xhr.setRequestHeader('Content-Type', 'application/json');
          xhr.send(body ? body : null);
        } catch (e) {
          return e && e.name === 'TimeoutError' ? -1 : 0;
        }
        if (xhr.status === 0) return 0;
        Module.memfitXhr = {
          body: new Uint8Array(xhr.response || new ArrayBuffer(0)),
          headers: xhr.getAllResponseHeaders() || '',
          url: xhr.responseURL || UTF8ToString(url),
        };
        if (typeof Module.memfitOnRequest === 'function') Module.memfitOnRequest(UTF8ToString(url));
        return xhr.status;
      });

EM_JS(double, memfit_xhr_body_size, (), { return Module.memfitXhr ? Module.memfitXhr.body.length : 0; });

// Copies at most `cap` bytes of the body to `out`; the header block and final URL as one string
// "URL\nheader lines" (malloc'ed, UTF-8).
EM_JS(void, memfit_xhr_body_copy, (char* out, double cap), {
  HEAPU8.set(Module.memfitXhr.body.subarray(0, cap), out);
});
EM_JS(char*, memfit_xhr_head, (), {
  const text = Module.memfitXhr.url + '\n' + Module.memfitXhr.headers;
  const bytes = lengthBytesUTF8(text) + 1;
  const out = _malloc(bytes);
  stringToUTF8(text, out, bytes);
  return out;
});

namespace memfit::hubnet {
namespace {

// scheme://host[:port] of a URL, lowercase; "" when it has none.
std::string Origin(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return "";
  const size_t host_end = url.find_first_of("/?#", scheme_end + 3);
  std::string out(url.substr(0, host_end));
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string HostOf(std::string_view url) {
  const std::string origin = Origin(url);
  const size_t pos = origin.find("://");
  return pos == std::string::npos ? std::string(url) : origin.substr(pos + 3);
}

}  // namespace

struct HttpClient::Attempt {
  int code = 0;  // memfit_xhr_send's answer
};

HttpClient::HttpClient(const HubSettings& settings, HubStats& stats)
    : settings_(settings), stats_(stats), curl_(nullptr) {
  if (settings.deadline_ms > 0) {
    deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(settings.deadline_ms);
  }
}

HttpClient::~HttpClient() = default;

Result<HttpResponse> HttpClient::GetOnce(const HttpRequest& request, Attempt& attempt) {
  std::string range;
  if (request.range) {
    range = "bytes=" + std::to_string(request.range->first) + "-" +
            std::to_string(request.range->second);
  }
  // The token goes to the Hub only.
  const bool to_hub = Origin(request.url) == Origin(settings_.endpoint);
  stats_.requests.fetch_add(1, std::memory_order_relaxed);
  attempt.code = memfit_xhr_send(request.post_json ? "POST" : "GET", request.url.c_str(),
                                 range.c_str(), to_hub ? settings_.token.c_str() : "",
                                 request.post_json ? request.post_json->c_str() : "",
                                 static_cast<int>(request.timeout_ms));
  if (attempt.code <= 0) return MakeError("transport");
  const uint64_t size = static_cast<uint64_t>(memfit_xhr_body_size());
  stats_.bytes.fetch_add(size, std::memory_order_relaxed);
  // As http_client.cc: a server that ignores Range sent the file from byte 0; keep up to the
  // last byte asked for, and without a range at most max_body_bytes + 1 (then capped).
  const uint64_t cap = request.range ? request.range->second + 1 : request.max_body_bytes + 1;
  const bool capped = size > cap;
  std::string body(static_cast<size_t>(std::min(size, cap)), '\0');
  if (!body.empty()) memfit_xhr_body_copy(body.data(), static_cast<double>(body.size()));
  char* head = memfit_xhr_head();
  std::string_view text(head);
  const size_t first_line = text.find('\n');
  std::string final_url(text.substr(0, first_line));
  std::map<std::string, std::string> headers;
  for (size_t pos = first_line + 1; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    AddHeaderLine(text.substr(pos, end - pos), headers);
    pos = end + 1;
  }
  std::free(head);
  // The browser followed any redirect: the first answer's headers are the final answer's.
  return FinishResponse(request, std::move(final_url), attempt.code, headers, headers,
                        std::move(body), capped);
}

Result<HttpResponse> HttpClient::Send(const HttpRequest& request) {
  Attempt attempt;
  auto result = GetOnce(request, attempt);
  if (!result && attempt.code <= 0) {
    return MakeError("cannot reach {} from this page (offline, or it refused a cross-origin read)",
                     HostOf(request.url));
  }
  return result;
}

Result<HttpResponse> HttpClient::Get(const HttpRequest& request, const ErrorContext& context,
                                     HubFailure* failure) {
  if (failure) *failure = HubFailure::kOther;
  const uint32_t attempts = std::max<uint32_t>(1, settings_.max_attempts);
  const std::string shown = RedactUrl(request.url);
  for (uint32_t attempt_number = 1;; ++attempt_number) {
    if (std::chrono::steady_clock::now() >= deadline_) {
      if (failure) *failure = HubFailure::kUnreachable;
      return WithKind(MakeError("{}: no answer within the lookup's deadline of {} ms", shown,
                                settings_.deadline_ms),
                      ErrorKind::kUnavailable);
    }
    Attempt attempt;
    auto result = GetOnce(request, attempt);
    std::optional<Error> final_error;
    if (!result && attempt.code > 0) return result.error();
    if (attempt.code == 0) {
      if (failure) *failure = HubFailure::kUnreachable;
      return WithKind(MakeError("cannot reach {} from this page (offline, or it refused a "
                                "cross-origin read: no CORS headers)",
                                HostOf(request.url)),
                      ErrorKind::kUnavailable);
    }
    if (attempt.code < 0) {
      if (failure) *failure = HubFailure::kUnreachable;
      final_error = WithKind(MakeError("{}: timed out after {} ms, {} attempts", shown,
                                       request.timeout_ms, attempt_number),
                             ErrorKind::kUnavailable);
    } else {
      HttpResponse& r = *result;
      if (r.status >= 200 && r.status < 300) return result;
      if (!IsRetryableStatus(r.status)) {
        return HubStatusError(r.status, r.headers, context, settings_.endpoint,
                              !settings_.token.empty(), shown);
      }
      final_error = WithKind(MakeError("{}: {} (HTTP {}) after {} attempts", shown,
                                       r.status == 429 ? "rate limited" : "server error", r.status,
                                       attempt_number),
                             ErrorKind::kUnavailable);
    }
    // No sleeping between attempts: a worker that blocks holds the page's answers back, and a
    // browser's own connection handling already retries resets.
    if (attempt_number >= attempts || attempt_number >= 2) return *final_error;
    if (failure) *failure = HubFailure::kOther;
    stats_.retries.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace memfit::hubnet
