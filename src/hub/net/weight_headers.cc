// Safetensors headers of Hub files (see weight_headers.h).

#include "hub/net/weight_headers.h"

#include <algorithm>

#include "hub/net/hub_file_source.h"
#include "memfit/byte_source.h"

namespace memfit::hubnet {
namespace {

constexpr uint64_t kMaxAdaptiveFirstRead = 8ull << 20;

// Over the network: one range for the first bytes (most headers fit), a second (straight to the
// CDN URL of the first) for the rest when the header is longer.
Result<SafetensorsHeader> FetchHeader(HubSession& s, const RepoFile& file, HttpClient& client) {
  HubFileSource source(&client, s.settings, s.stats, s.ResolveUrl(file.path), s.Context(file.path),
                       file.size);
  const std::string name = source.Name();
  if (file.size < 8) {
    return MakeError("{}: {} bytes is too small for a safetensors file", name, file.size);
  }
  const uint64_t first = FirstReadBytes(s.settings.first_read_bytes, s.largest_header_bytes.load());
  MEMFIT_ASSIGN_OR_RETURN(std::string prefix,
                          source.Read(0, static_cast<size_t>(std::min(file.size, first))));
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{static_cast<unsigned char>(prefix[i])} << (8 * i);
  const SafetensorsLimits limits;
  if (n > limits.max_header_bytes) {
    return MakeError("{}: safetensors header length {} exceeds the cap of {} bytes", name, n,
                     limits.max_header_bytes);
  }
  if (n <= file.size - 8 && 8 + n > prefix.size()) {
    MEMFIT_ASSIGN_OR_RETURN(std::string rest,
                            source.Read(prefix.size(), static_cast<size_t>(8 + n - prefix.size())));
    prefix += rest;
  }
  PrefixByteSource known(std::move(prefix), file.size, name);
  MEMFIT_ASSIGN_OR_RETURN(auto header, ReadSafetensorsHeader(known, limits));
  // Only a header that parsed steers later first reads (a hostile length cannot inflate them).
  uint64_t seen = s.largest_header_bytes.load();
  while (header.header_bytes > seen &&
         !s.largest_header_bytes.compare_exchange_weak(seen, header.header_bytes)) {
  }
  return header;
}

}  // namespace

uint64_t FirstReadBytes(uint64_t configured, uint64_t largest_seen) {
  if (largest_seen == 0) return configured;
  uint64_t want = 8 + largest_seen + largest_seen / 8;
  want = (std::min(want, kMaxAdaptiveFirstRead) + 4095) / 4096 * 4096;
  return std::max(configured, want);
}

Result<std::optional<SafetensorsHeader>> ReadWeightHeader(HubSession& s, const RepoFile& file,
                                                          const ClientFactory& client) {
  if (auto local = s.cache.FullSnapshotFile(s.ref.repo_id, s.commit, file.path, file.size)) {
    auto source = OpenFileByteSource(*local);
    MEMFIT_ASSIGN_OR_RETURN(auto header, ReadSafetensorsHeader(*source));
    s.stats.headers_cached++;
    return std::optional<SafetensorsHeader>(std::move(header));
  }
  if (auto cached = s.cache.ReadHeader(file.etag);
      cached && 8 + cached->header_bytes + cached->data_bytes == file.size) {
    s.stats.headers_cached++;
    return std::optional<SafetensorsHeader>(std::move(*cached));
  }
  if (!s.online) return std::optional<SafetensorsHeader>();
  MEMFIT_ASSIGN_OR_RETURN(auto header, FetchHeader(s, file, client()));
  s.cache.WriteHeader(file.etag, header);
  s.stats.headers_fetched++;
  return std::optional<SafetensorsHeader>(std::move(header));
}

}  // namespace memfit::hubnet
