#pragma once
// A safetensors header of a Hub file: from the whole file in an HF cache snapshot, memfit's header
// cache (keyed by the file's sha256 etag), or (online) the Hub with range requests.

#include <optional>

#include "hub/net/hub_session.h"
#include "memfit/safetensors.h"

namespace memfit::hubnet {

// nullopt when offline and not cached. Counts headers_fetched / headers_cached.
Result<std::optional<SafetensorsHeader>> ReadWeightHeader(HubSession& s, const RepoFile& file,
                                                          const ClientFactory& client);

// The first range of a header: `configured` (HubSettings::first_read_bytes), or room for a
// header like the longest seen so far in this resolution (N + 8 + 1/8, in 4 KiB pages, at most
// 8 MiB) when that is more. Shards of one model have similar headers, so once one long header has
// cost two requests the rest cost one.
uint64_t FirstReadBytes(uint64_t configured, uint64_t largest_seen);

}  // namespace memfit::hubnet
