// GPU catalog lookup and --gpu parsing.

#include <algorithm>
#include <cctype>
#include <charconv>

#include "memfit/gpu.h"

#include <cmath>
#include <cstdlib>

#include "base/enum_names.h"
#include "memfit/suggest.h"
#include "memfit/units.h"
#include "plan/gpu_catalog_data.h"

namespace memfit {
namespace {

// Lowercase alphanumerics only, with brand words removed: "NVIDIA GeForce RTX 4090" -> "rtx4090".
std::string Normalize(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  for (std::string_view word : {"nvidia", "geforce", "tesla", "radeon", "instinct", "apple", "amd",
                                "intel", "arc"}) {
    if (out.starts_with(word) && out.size() > word.size()) out.erase(0, word.size());
  }
  // "rtx4090" and "4090" both name the RTX 4090; the catalog's normalized names keep "rtx".
  return out;
}

std::vector<std::string> Keys(const GpuSpec& gpu) {
  std::vector<std::string> keys = {Normalize(gpu.name)};
  std::string_view aliases = gpu.aliases;
  while (!aliases.empty()) {
    size_t bar = aliases.find('|');
    keys.push_back(Normalize(aliases.substr(0, bar)));
    if (bar == std::string_view::npos) break;
    aliases.remove_prefix(bar + 1);
  }
  // Brand words the catalog writes itself ("Arc A770", "Radeon PRO W7900") are optional too.
  for (std::string_view word : {"rtx", "rx", "radeon", "arc"}) {
    std::string k = keys.front();
    if (k.starts_with(word) && k.size() > word.size()) keys.push_back(k.substr(word.size()));
  }
  return keys;
}

constexpr auto kVendors = std::to_array<EnumWord<GpuVendor>>({
    {"nvidia", GpuVendor::kNvidia}, {"amd", GpuVendor::kAmd}, {"apple", GpuVendor::kApple},
    {"intel", GpuVendor::kIntel}});

}  // namespace

std::string_view GpuVendorName(GpuVendor vendor) { return NameOf(vendor, kVendors); }

Result<GpuVendor> ParseGpuVendor(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (auto vendor = FindWord(lower, kVendors)) return *vendor;
  return MakeError("--vendor {}: expected nvidia, amd, apple or intel", name);
}

uint64_t MemoryBytes(const GpuSpec& gpu) { return uint64_t{gpu.memory_gb} << 30; }

uint32_t ComputeCapability(const GpuSpec& gpu) { return plan::TableComputeCapability(gpu.name); }

std::span<const GpuSpec> GpuCatalog() { return plan::GpuTable(); }

Result<const GpuSpec*> FindGpu(std::string_view name) {
  std::string key = Normalize(name);
  if (key.empty()) return MakeError("--gpu \"{}\": empty GPU name", name);
  std::vector<const GpuSpec*> prefix;
  for (const auto& gpu : GpuCatalog()) {
    for (const auto& k : Keys(gpu)) {
      if (k == key) return &gpu;
    }
  }
  for (const auto& gpu : GpuCatalog()) {
    for (const auto& k : Keys(gpu)) {
      if (k.starts_with(key)) {
        prefix.push_back(&gpu);
        break;
      }
    }
  }
  if (prefix.size() == 1) return prefix.front();
  if (prefix.empty()) {
    // Did you mean: the catalog GPU with the closest key (rtx4900 -> RTX 4090).
    const GpuSpec* closest = nullptr;
    size_t best = std::max<size_t>(1, key.size() / 3) + 1;
    for (const auto& gpu : GpuCatalog()) {
      for (const auto& k : Keys(gpu)) {
        if (const size_t d = EditDistance(key, k); d < best) {
          best = d;
          closest = &gpu;
        }
      }
    }
    const std::string hint =
        closest ? fmt::format(" (did you mean {}?)", closest->name) : std::string();
    return MakeError("--gpu \"{}\": not in memfit's GPU catalog{} (see `memfit gpus`); or give a "
                     "size such as 24GiB",
                     name, hint);
  }
  std::string names;
  for (size_t i = 0; i < prefix.size() && i < 8; ++i) {
    names += (i ? ", " : "") + std::string(prefix[i]->name);
  }
  return MakeError("--gpu \"{}\" is ambiguous: {}", name, names);
}

namespace {

// A bare number ("4090", "3090") is a GPU's model number far more often than a size in bytes:
// refuse it, suggesting the catalog GPU of that name (the one whose name ends in the number, the
// shortest: RTX 3090 before RTX 3090 Ti), as many as a "2x" prefix asked for, and the unit a size
// needs.
Status RefuseBareNumber(std::string_view text, std::string_view rest, uint64_t count) {
  std::string_view number = rest;
  while (!number.empty() && number.back() == ' ') number.remove_suffix(1);
  for (char c : number) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return Ok{};
  }
  const GpuSpec* best = nullptr;
  std::string best_key;
  bool best_ends = false;
  for (const auto& gpu : GpuCatalog()) {
    std::string key = Normalize(gpu.name);
    const size_t at = key.find(number);
    if (at == std::string::npos) continue;
    const bool ends = at + number.size() == key.size();
    if (!best || (ends && !best_ends) || (ends == best_ends && key.size() < best_key.size())) {
      best = &gpu;
      best_key = std::move(key);
      best_ends = ends;
    }
  }
  std::string suggestion;
  if (best && count > 1) {
    suggestion = fmt::format(" did you mean {} x {} ({} each: --gpu {}x{})?", count, best->name,
                             FormatBytes(MemoryBytes(*best)), count, best_key);
  } else if (best) {
    suggestion = fmt::format(" did you mean {} ({})?", best->name, FormatBytes(MemoryBytes(*best)));
  }
  return MakeError("--gpu \"{}\": a bare number is neither a GPU nor a size;{} A size needs a "
                   "unit, such as {}GiB",
                   text, suggestion, number);
}

}  // namespace

Status ParseDeviceArg(std::string_view text, std::vector<DeviceSpec>& out) {
  // "2xH100", "4x rtx4090": a count, then 'x'.
  uint64_t count = 1;
  std::string_view rest = text;
  size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  if (digits > 0 && digits + 1 < rest.size() && (rest[digits] == 'x' || rest[digits] == 'X')) {
    std::string_view after = rest.substr(digits + 1);
    // "2x..." only when what follows is not a size suffix of a number ("24GiB" has no 'x').
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + digits, count);
    if (ec != std::errc() || count == 0 || count > 1024) {
      return MakeError("--gpu \"{}\": device count must be 1 to 1024", text);
    }
    rest = after;
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  }
  DeviceSpec device;
  if (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest.front()))) {
    MEMFIT_RETURN_IF_ERROR(RefuseBareNumber(text, rest, count));
    auto bytes = ParseByteSize(rest);
    if (bytes) {
      if (*bytes == 0) return MakeError("--gpu \"{}\": a device needs more than 0 bytes", text);
      // Vendors label cards in binary units written "GB" (an "RTX 4090 24 GB" has 24 GiB): a GPU
      // given as 24GB or 1TB is read that way, and the label says so.
      std::string unit;
      for (char c : rest) {
        if (std::isalpha(static_cast<unsigned char>(c))) unit += static_cast<char>(std::tolower(c));
      }
      if (unit == "gb" || unit == "tb") {
        const double value = std::strtod(std::string(rest).c_str(), nullptr);
        const double scale = unit == "gb" ? double(uint64_t{1} << 30) : double(uint64_t{1} << 40);
        if (!(value * scale < 1.8e19)) return MakeError("--gpu \"{}\": size out of range", text);
        device.memory_bytes = static_cast<uint64_t>(std::round(value * scale));
        device.label = fmt::format("{} GPU ({} read as {}iB, as vendors label cards)",
                                   FormatBytes(device.memory_bytes), rest,
                                   std::string(rest.substr(0, rest.size() - 1)));
      } else {
        device.memory_bytes = *bytes;
        device.label = FormatBytes(*bytes) + " GPU";
      }
    }
  }
  if (device.memory_bytes == 0) {
    auto gpu = FindGpu(rest);
    if (!gpu) return gpu.error();
    device.gpu = *gpu;
    device.memory_bytes = MemoryBytes(**gpu);
    device.label = std::string((*gpu)->name);
  }
  for (uint64_t i = 0; i < count; ++i) out.push_back(device);
  return Ok{};
}

Result<GpuChoice> ParseGpuChoice(std::string_view text) {
  std::vector<DeviceSpec> devices;
  MEMFIT_RETURN_IF_ERROR(ParseDeviceArg(text, devices));
  if (devices.empty()) return MakeError("--gpu \"{}\": no device", text);
  return GpuChoice{devices.front(), devices.size()};
}

}  // namespace memfit
