#pragma once
// The binary forms of what memfit's cache keeps (see hub_cache.h): parsed safetensors headers and
// weight indexes. Decoding trusts nothing: every count and length is checked against the bytes
// left, every invariant the parsers guarantee is checked again, and anything malformed is nullopt
// (a cache miss). The formats are in cache_codec.cc; a change of format changes its magic.

#include <optional>
#include <string>
#include <string_view>

#include "memfit/safetensors.h"

namespace memfit::hubnet {

// "" when the header cannot be represented (a name of 4 GiB, a rank over 2^32): not cached.
std::string SerializeHeader(const SafetensorsHeader& header);
std::optional<SafetensorsHeader> DeserializeHeader(std::string_view bytes);

std::string SerializeIndex(const WeightIndex& index);
std::optional<WeightIndex> DeserializeIndex(std::string_view bytes);

}  // namespace memfit::hubnet
