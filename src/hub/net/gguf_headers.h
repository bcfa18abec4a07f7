#pragma once
// GGUF headers of Hub files: from the whole file in an HF cache snapshot, memfit's cache of the
// header bytes (keyed by the file's sha256 etag), or (online) range reads whose read-ahead window
// doubles (1 MiB, 2, 4, ... 32 MiB), so a 6 MiB header with a 150k-token vocabulary costs three
// ranges after the redirect. The reader (include/memfit/gguf.h) is the one local files use.

#include <optional>

#include "hub/net/hub_session.h"
#include "memfit/gguf.h"

namespace memfit::hubnet {

// Limits for a GGUF header read over the network: 64 KiB reader chunks (what is cached beyond
// the header), a 256 MiB cap on the header (the largest vocabularies take tens of MiB).
GgufLimits HubGgufLimits();

// nullopt when offline and not cached. Counts headers_fetched / headers_cached.
Result<std::optional<GgufFile>> ReadGgufFromHub(HubSession& s, const RepoFile& file,
                                                const ClientFactory& client);

}  // namespace memfit::hubnet
