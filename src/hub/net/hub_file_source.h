#pragma once
// ByteSources for Hub files: HTTP range reads of /{id}/resolve/{rev}/{file} (keeping the CDN URL
// after the first redirect, and one window of bytes so that small sequential reads cost one
// request), and a known prefix of a file (a fetched or cached header).

#include <memory>
#include <optional>
#include <string>

#include "hub/net/http_client.h"
#include "memfit/byte_source.h"

namespace memfit::hubnet {

class HubFileSource final : public ByteSource {
 public:
  // `client` is used when not null; otherwise the source owns one (made from `settings`/`stats`,
  // which must outlive it). `size` comes from the tree listing when known.
  HubFileSource(HttpClient* client, const HubSettings& settings, HubStats& stats,
                std::string resolve_url, ErrorContext context, std::optional<uint64_t> size);
  Result<uint64_t> Size() override;
  Result<std::string> Read(uint64_t offset, size_t length) override;
  std::string Name() const override { return RedactUrl(resolve_url_); }

  // Read-ahead for sequential readers (the GGUF reader asks for small chunks): a read outside the
  // window fetches at least `first_bytes`, doubling on each fetch up to `max_bytes`, so a header
  // of H bytes costs about log2(H / first_bytes) ranges. Default: 64 KiB, no growth.
  void SetWindow(uint64_t first_bytes, uint64_t max_bytes);

 private:
  Result<Ok> Fetch(uint64_t offset, uint64_t length);

  std::unique_ptr<HttpClient> owned_;
  HttpClient* client_;
  const HubSettings& settings_;
  std::string resolve_url_;
  std::string direct_url_;  // the CDN URL after the first redirect, reused for later ranges
  ErrorContext context_;
  std::optional<uint64_t> size_;
  uint64_t window_offset_ = 0;
  std::string window_;
  uint64_t next_window_bytes_ = 64 << 10;
  uint64_t max_window_bytes_ = 64 << 10;
};

// The first bytes of a file whose total size is known; reads past them fail.
class PrefixByteSource final : public ByteSource {
 public:
  PrefixByteSource(std::string prefix, uint64_t size, std::string name)
      : prefix_(std::move(prefix)), size_(size), name_(std::move(name)) {}
  Result<uint64_t> Size() override { return size_; }
  Result<std::string> Read(uint64_t offset, size_t length) override;
  std::string Name() const override { return name_; }

 private:
  std::string prefix_;
  uint64_t size_;
  std::string name_;
};

}  // namespace memfit::hubnet
