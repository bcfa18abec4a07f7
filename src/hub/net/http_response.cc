// HTTP answers taken apart (see http_response.h, docs/hub.md "Errors").

#include "hub/net/http_response.h"

#include <cctype>

#include "hub/net/hub_api.h"

namespace memfit::hubnet {
namespace {

std::string OneLine(std::string_view s, size_t max = 200) {
  std::string out;
  for (char c : s.substr(0, max)) out += (c == '\n' || c == '\r') ? ' ' : c;
  return out;
}

std::string Header(const std::map<std::string, std::string>& headers, const std::string& name) {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

}  // namespace

std::string RedactUrl(std::string_view url) { return std::string(url.substr(0, url.find('?'))); }

void AddHeaderLine(std::string_view line, std::map<std::string, std::string>& headers) {
  if (line.starts_with("HTTP/")) {
    headers.clear();
    return;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;
  std::string name(line.substr(0, colon));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  headers[name] = std::string(value);
}

Result<HttpResponse> FinishResponse(const HttpRequest& request, std::string final_url, long status,
                                    std::map<std::string, std::string> headers,
                                    std::map<std::string, std::string> hub_headers,
                                    std::string body, bool capped) {
  HttpResponse response;
  response.status = status;
  response.headers = std::move(headers);
  response.hub_headers = std::move(hub_headers);
  response.final_url = std::move(final_url);
  const std::string shown = RedactUrl(response.final_url);
  if (!request.range && capped) {
    return MakeError("{}: response larger than {} bytes", shown, request.max_body_bytes);
  }
  if (request.range && status == 200) {
    // Full body: keep the asked-for window.
    uint64_t first = request.range->first;
    response.body = first < body.size() ? body.substr(static_cast<size_t>(first)) : std::string();
    if (auto len = ParseDecimalU64(Header(response.headers, "content-length"))) {
      response.total_size = *len;
    }
  } else {
    response.body = std::move(body);
    const std::string range_header = Header(response.headers, "content-range");
    auto content_range = ParseContentRange(range_header);
    if (request.range && status == 206) {
      // A 206 must hold the range asked for: bytes from another offset would be misread.
      if (!content_range || !content_range->first || *content_range->first != request.range->first) {
        return MakeError("{}: answered a range from byte {} with Content-Range \"{}\"", shown,
                         request.range->first, OneLine(range_header, 80));
      }
    }
    if (content_range && content_range->total) {
      response.total_size = content_range->total;
    } else if (!request.range) {
      response.total_size = ParseDecimalU64(Header(response.headers, "content-length"));
    }
  }
  if (!response.total_size) {
    if (auto linked = ParseDecimalU64(Header(response.hub_headers, "x-linked-size"))) {
      response.total_size = linked;
    }
  }
  return response;
}

bool IsRetryableStatus(long status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

Error HubStatusError(long status, const std::map<std::string, std::string>& headers,
                     const ErrorContext& context, std::string_view endpoint, bool token_sent,
                     std::string_view shown_url) {
  const std::string code = Header(headers, "x-error-code");
  const std::string message = OneLine(Header(headers, "x-error-message"));
  const std::string token_hint = token_sent ? "the token sent does not grant access"
                                            : "no token was sent: pass --token or set HF_TOKEN";
  if (code == "GatedRepo") {
    return WithKind(MakeError("{} is gated: accept its terms at {}/{} and use a token of that account ({}) "
                     "(HTTP {})",
                     context.repo_id, endpoint, context.repo_id, token_hint, status),
                    ErrorKind::kForbidden);
  }
  if (code == "RepoNotFound" || status == 401) {
    // The Hub answers 401 for a private repository without a token as for a missing one.
    return WithKind(MakeError("{}: repository not found on {}, or private ({}) (HTTP {})",
                              context.repo_id, endpoint, token_hint, status),
                    ErrorKind::kNotFound);
  }
  if (code == "RevisionNotFound") {
    return WithKind(MakeError("{}: revision \"{}\" not found (HTTP {})", context.repo_id,
                              context.revision, status),
                    ErrorKind::kNotFound);
  }
  if (code == "EntryNotFound") {
    return WithKind(MakeError("{}: file {} not found at revision \"{}\" (HTTP {})",
                              context.repo_id, context.file, context.revision, status),
                    ErrorKind::kNotFound);
  }
  if (status == 403) {
    return WithKind(MakeError("{}: forbidden (HTTP 403){}{}", shown_url,
                              message.empty() ? "" : ": ", message),
                    ErrorKind::kForbidden);
  }
  if (status == 404) {
    return WithKind(MakeError("{}: not found (HTTP 404)", shown_url), ErrorKind::kNotFound);
  }
  return MakeError("{}: HTTP {}{}{}", shown_url, status, message.empty() ? "" : ": ", message);
}

}  // namespace memfit::hubnet
