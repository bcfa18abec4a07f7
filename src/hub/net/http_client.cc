// libcurl GET with the Hub's redirect, retry and error rules (see http_client.h, docs/hub.md).

#include "hub/net/http_client.h"

#include "hub/net/hub_api.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

namespace memfit::hubnet {
namespace {

constexpr int kMaxRedirects = 10;

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

struct BodyState {
  std::string body;
  uint64_t cap = 0;
  bool capped = false;
  HubStats* stats = nullptr;
};

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<BodyState*>(user);
  size_t n = size * count;
  state->stats->bytes.fetch_add(n, std::memory_order_relaxed);
  uint64_t room = state->cap - std::min<uint64_t>(state->cap, state->body.size());
  if (n > room) {
    state->body.append(data, static_cast<size_t>(room));
    state->capped = true;
    return 0;  // stop the transfer: we have what we need (CURLE_WRITE_ERROR, handled below)
  }
  state->body.append(data, n);
  return n;
}

size_t WriteHeader(char* data, size_t size, size_t count, void* user) {
  AddHeaderLine(std::string_view(data, size * count),
                *static_cast<std::map<std::string, std::string>*>(user));
  return size * count;
}

// scheme://host:port of a URL (default ports filled in), lowercase; "" when unparsable.
std::string Origin(const std::string& url) {
  CURLU* u = curl_url();
  std::string out;
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
    char *scheme = nullptr, *host = nullptr, *port = nullptr;
    if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
      out = std::string(scheme) + "://" + host + ":" + port;
      for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
  }
  curl_url_cleanup(u);
  return out;
}

std::string HostOf(const std::string& url) {
  std::string origin = Origin(url);
  auto pos = origin.find("://");
  return pos == std::string::npos ? url : origin.substr(pos + 3);
}

// `location` resolved against `base` (relative redirects).
std::string ResolveUrl(const std::string& base, const std::string& location) {
  CURLU* u = curl_url();
  std::string out;
  if (curl_url_set(u, CURLUPART_URL, base.c_str(), 0) == CURLUE_OK &&
      curl_url_set(u, CURLUPART_URL, location.c_str(), 0) == CURLUE_OK) {
    char* full = nullptr;
    if (curl_url_get(u, CURLUPART_URL, &full, 0) == CURLUE_OK) out = full;
    curl_free(full);
  }
  curl_url_cleanup(u);
  return out;
}

}  // namespace

struct HttpClient::Attempt {
  CURLcode code = CURLE_OK;
  std::string curl_error;
};

HttpClient::HttpClient(const HubSettings& settings, HubStats& stats)
    : settings_(settings), stats_(stats) {
  if (settings.deadline_ms > 0) {
    deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(settings.deadline_ms);
  }
  static CurlGlobal global;
  curl_ = curl_easy_init();
}

HttpClient::~HttpClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

Result<HttpResponse> HttpClient::GetOnce(const HttpRequest& request, Attempt& attempt) {
  CURL* curl = static_cast<CURL*>(curl_);
  if (!curl) return MakeError("{}: libcurl could not start", RedactUrl(request.url));
  const std::string endpoint_origin = Origin(settings_.endpoint);
  HttpResponse response;
  std::string url = request.url;
  const std::string* post_json = request.post_json ? &*request.post_json : nullptr;
  char error_buffer[CURL_ERROR_SIZE];
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    curl_easy_reset(curl);
    error_buffer[0] = '\0';
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout_ms));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.timeout_ms));
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "memfit/0.1.0");
    if (!settings_.ca_bundle.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, settings_.ca_bundle.c_str());
    struct curl_slist* list = nullptr;
    list = curl_slist_append(list, "Accept-Encoding: identity");
    // The token goes to the Hub only: a redirect to a CDN carries its own signature.
    if (!settings_.token.empty() && Origin(url) == endpoint_origin) {
      std::string auth = "Authorization: Bearer " + settings_.token;
      list = curl_slist_append(list, auth.c_str());
      std::fill(auth.begin(), auth.end(), '\0');
    }
    if (post_json) {
      curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(post_json->size()));
      curl_easy_setopt(curl, CURLOPT_POSTFIELDS, post_json->data());
      list = curl_slist_append(list, "Content-Type: application/json");
      list = curl_slist_append(list, "Expect:");  // no 100-continue round trip
    }
    if (request.range) {
      std::string range = "Range: bytes=" + std::to_string(request.range->first) + "-" +
                          std::to_string(request.range->second);
      list = curl_slist_append(list, range.c_str());
    }
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    BodyState body;
    body.stats = &stats_;
    // A server that ignores Range sends the file from byte 0: keep up to the last byte asked for.
    body.cap = request.range ? request.range->second + 1 : request.max_body_bytes + 1;
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    std::map<std::string, std::string> headers;
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, WriteHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &headers);
    stats_.requests.fetch_add(1, std::memory_order_relaxed);
    CURLcode code = curl_easy_perform(curl);
    curl_slist_free_all(list);  // holds the token: freed right away
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && body.capped)) {
      attempt.code = code;
      attempt.curl_error = error_buffer[0] ? error_buffer : curl_easy_strerror(code);
      return MakeError("transport");
    }
    if (hop == 0) response.hub_headers = headers;
    if (status >= 300 && status < 400 && headers.count("location")) {
      std::string next = ResolveUrl(url, headers["location"]);
      if (next.empty()) {
        return MakeError("{}: bad redirect location", RedactUrl(url));
      }
      url = next;
      if (status == 301 || status == 302 || status == 303) post_json = nullptr;
      continue;
    }
    return FinishResponse(request, std::move(url), status, std::move(headers),
                          std::move(response.hub_headers), std::move(body.body), body.capped);
  }
  return MakeError("{}: more than {} redirects", RedactUrl(request.url), kMaxRedirects);
}

Result<HttpResponse> HttpClient::Send(const HttpRequest& request) {
  Attempt attempt;
  auto result = GetOnce(request, attempt);
  if (!result && attempt.code != CURLE_OK) {
    return MakeError("cannot reach {}: {}", HostOf(request.url), curl_easy_strerror(attempt.code));
  }
  return result;
}

Result<HttpResponse> HttpClient::Get(const HttpRequest& request, const ErrorContext& context,
                                     HubFailure* failure) {
  if (failure) *failure = HubFailure::kOther;
  const uint32_t attempts = std::max<uint32_t>(1, settings_.max_attempts);
  const std::string shown = RedactUrl(request.url);
  const auto remaining_ms = [&]() -> uint64_t {
    if (deadline_ == std::chrono::steady_clock::time_point::max()) return UINT64_MAX;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline_) return 0;
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - now).count());
  };
  const auto past_deadline = [&] {
    if (failure) *failure = HubFailure::kUnreachable;
    return WithKind(MakeError("{}: no answer within the lookup's deadline of {} ms "
                              "(MEMFIT_HUB_DEADLINE)", shown, settings_.deadline_ms),
                    ErrorKind::kUnavailable);
  };
  for (uint32_t attempt_number = 1;; ++attempt_number) {
    Attempt attempt;
    const uint64_t left = remaining_ms();
    if (left == 0) return past_deadline();
    HttpRequest bounded = request;
    bounded.timeout_ms = static_cast<uint32_t>(std::min<uint64_t>(request.timeout_ms, left));
    auto result = GetOnce(bounded, attempt);
    uint64_t wait_ms =
        std::min<uint64_t>(settings_.retry_max_ms, uint64_t{settings_.retry_base_ms}
                                                       << std::min<uint32_t>(attempt_number - 1, 20));
    std::optional<Error> final_error;
    if (!result && attempt.code == CURLE_OK) return result.error();
    if (!result) {
      switch (attempt.code) {
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_COULDNT_CONNECT:
          if (failure) *failure = HubFailure::kUnreachable;
          // curl_easy_strerror, not the error buffer: the buffer carries timings ("after 0 ms"),
          // which would make the same request's output differ from run to run.
          return WithKind(MakeError("cannot reach {}: {} (use --offline to work from the cache)",
                                    HostOf(request.url), curl_easy_strerror(attempt.code)),
                          ErrorKind::kUnavailable);
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CIPHER:
        case CURLE_SSL_CACERT_BADFILE:
          return MakeError("{}: TLS failure: {} (set REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE to a CA "
                           "bundle if a proxy re-signs traffic)",
                           HostOf(request.url), attempt.curl_error);
        case CURLE_OPERATION_TIMEDOUT:
          if (bounded.timeout_ms < request.timeout_ms) return past_deadline();
          // A Hub that does not answer is as good as unreachable (HubGuard remembers it).
          if (failure) *failure = HubFailure::kUnreachable;
          final_error = WithKind(MakeError("{}: timed out after {} ms, {} attempts (raise "
                                           "HF_HUB_ETAG_TIMEOUT or HF_HUB_DOWNLOAD_TIMEOUT)",
                                           shown, request.timeout_ms, attempt_number),
                                 ErrorKind::kUnavailable);
          break;
        default:
          final_error = MakeError("{}: {} ({} attempts)", shown, attempt.curl_error, attempt_number);
      }
    } else {
      HttpResponse& r = *result;
      if (r.status >= 200 && r.status < 300) return result;
      if (!IsRetryableStatus(r.status)) {
        return HubStatusError(r.status, r.headers, context, settings_.endpoint,
                              !settings_.token.empty(), shown);
      }
      if (r.status == 429) {
        if (auto after = ParseDecimalU64(r.headers["retry-after"])) {
          wait_ms = std::min<uint64_t>(settings_.retry_max_ms, *after * 1000);
        }
        final_error = WithKind(MakeError("{}: rate limited (HTTP 429) after {} attempts; wait and "
                                         "retry, or pass a token (authenticated requests have "
                                         "higher limits)", shown, attempt_number),
                               ErrorKind::kUnavailable);
      } else {
        final_error = WithKind(MakeError("{}: server error (HTTP {}) after {} attempts", shown,
                                         r.status, attempt_number),
                               ErrorKind::kUnavailable);
      }
    }
    if (attempt_number >= attempts) return *final_error;
    if (wait_ms >= remaining_ms()) return past_deadline();
    if (failure) *failure = HubFailure::kOther;  // retried: the next attempt decides
    stats_.retries.fetch_add(1, std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  }
}

}  // namespace memfit::hubnet
