#pragma once
// Byte formatting. memfit prints binary units labelled honestly (KiB, MiB, GiB, TiB); accelerate's
// labels (KB/MB/GB meaning 1024-based) exist only for --accelerate compatibility.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "memfit/result.h"

namespace memfit {

// "1.61 GiB", "413.18 MiB", "512 B": two decimals, binary units.
std::string FormatBytes(uint64_t bytes);
// accelerate's convert_bytes: round(size, 2) with Python's repr, units bytes/KB/MB/GB/TB/PB,
// each 1024x the previous. Takes a double because accelerate divides by 2, 4 or 8.
std::string FormatBytesAccelerate(double bytes);
// Parses "24GiB", "24 GB" (decimal), "512MiB", "1.5TiB", "80000000000" (bytes).
Result<uint64_t> ParseByteSize(std::string_view text);
// Parameter counts: "108.3M", "8.03B".
std::string FormatCount(uint64_t count);
// Exact counts with thousands separators: "34,941".
std::string FormatGrouped(uint64_t n);

}  // namespace memfit
