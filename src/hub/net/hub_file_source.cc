#include "hub/net/hub_file_source.h"

#include <algorithm>

namespace memfit::hubnet {
HubFileSource::HubFileSource(HttpClient* client, const HubSettings& settings, HubStats& stats,
                             std::string resolve_url, ErrorContext context,
                             std::optional<uint64_t> size)
    : client_(client),
      settings_(settings),
      resolve_url_(std::move(resolve_url)),
      context_(std::move(context)),
      size_(size) {
  if (!client_) {
    owned_ = std::make_unique<HttpClient>(settings, stats);
    client_ = owned_.get();
  }
}

Result<uint64_t> HubFileSource::Size() {
  if (!size_) MEMFIT_RETURN_IF_ERROR(Fetch(0, 1));
  return *size_;
}

void HubFileSource::SetWindow(uint64_t first_bytes, uint64_t max_bytes) {
  next_window_bytes_ = std::max<uint64_t>(first_bytes, 1);
  max_window_bytes_ = std::max(max_bytes, next_window_bytes_);
}

Result<Ok> HubFileSource::Fetch(uint64_t offset, uint64_t length) {
  if (length == 0) length = 1;
  const uint64_t window = std::max(length, next_window_bytes_);
  next_window_bytes_ = std::min(max_window_bytes_, next_window_bytes_ * 2);
  uint64_t last = offset + window - 1;
  if (size_) {
    if (offset >= *size_) {
      return MakeError("{}: read at offset {} past the end ({} bytes)", Name(), offset, *size_);
    }
    last = std::min(last, *size_ - 1);
  }
  HttpRequest request{.url = direct_url_.empty() ? resolve_url_ : direct_url_,
                      .range = std::make_pair(offset, last),
                      .timeout_ms = settings_.download_timeout_ms};
  auto response = client_->Get(request, context_);
  if (!response && !direct_url_.empty()) {
    // A signed CDN URL may have expired: go through the Hub again.
    direct_url_.clear();
    request.url = resolve_url_;
    response = client_->Get(request, context_);
  }
  if (!response) return response.error();
  if (!size_) {
    if (!response->total_size) return MakeError("{}: the server did not say the file size", Name());
    size_ = response->total_size;
  }
  if (response->final_url != request.url) direct_url_ = response->final_url;
  uint64_t expected = std::min(last, *size_ - 1) - offset + 1;
  if (response->body.size() < std::min<uint64_t>(expected, length)) {
    return MakeError("{}: response shorter than asked: {} of {} bytes at offset {}", Name(),
                     response->body.size(), expected, offset);
  }
  if (response->body.size() > expected) response->body.resize(static_cast<size_t>(expected));
  window_offset_ = offset;
  window_ = std::move(response->body);
  return Ok{};
}

Result<std::string> HubFileSource::Read(uint64_t offset, size_t length) {
  if (size_ && (offset > *size_ || length > *size_ - offset)) {
    return MakeError("{}: read of {} bytes at offset {} past the end ({} bytes)", Name(), length,
                     offset, *size_);
  }
  bool inside = offset >= window_offset_ && offset - window_offset_ <= window_.size() &&
                length <= window_.size() - (offset - window_offset_);
  if (!inside) {
    MEMFIT_RETURN_IF_ERROR(Fetch(offset, length));
    if (length > window_.size()) {
      return MakeError("{}: response shorter than asked: {} of {} bytes at offset {}", Name(),
                       window_.size(), length, offset);
    }
  }
  return window_.substr(static_cast<size_t>(offset - window_offset_), length);
}

Result<std::string> PrefixByteSource::Read(uint64_t offset, size_t length) {
  if (offset > size_ || length > size_ - offset) {
    return MakeError("{}: read of {} bytes at offset {} past the end ({} bytes)", name_, length,
                     offset, size_);
  }
  if (offset > prefix_.size() || length > prefix_.size() - offset) {
    return MakeError("{}: bytes {}..{} were not fetched (only the first {})", name_, offset,
                     offset + length, prefix_.size());
  }
  return prefix_.substr(static_cast<size_t>(offset), length);
}

}  // namespace memfit::hubnet
