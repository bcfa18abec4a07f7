// Library versions and the allocations that depend on them. Sources in the header.

#include "memfit/runtime_versions.h"

#include <charconv>
#include <optional>

#include <fmt/format.h>

namespace memfit {
namespace {

// A run of decimal digits at the start of `s`, consumed; nullopt when there is none or it is
// too long to be a version component.
std::optional<uint32_t> TakeNumber(std::string_view& s) {
  size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  if (n == 0 || n > 6) return std::nullopt;
  uint32_t v = 0;
  std::from_chars(s.data(), s.data() + n, v);
  s.remove_prefix(n);
  return v;
}

}  // namespace

Result<LibraryVersion> ParseLibraryVersion(std::string_view text, std::string_view flag) {
  std::string_view s = text;
  auto major = TakeNumber(s);
  const bool dot = !s.empty() && s.front() == '.';
  if (dot) s.remove_prefix(1);
  auto minor = dot ? TakeNumber(s) : std::nullopt;
  if (!major || !minor || (!s.empty() && s.front() != '.' && s.front() != '+' &&
                           !(s.front() >= 'a' && s.front() <= 'z'))) {
    return MakeError("{} {}: expected a version major.minor such as 2.5", flag, text);
  }
  return LibraryVersion{*major, *minor};
}

std::string LibraryVersionName(LibraryVersion v) { return fmt::format("{}.{}", v.major, v.minor); }

std::string RuntimeVersionsAssumption(const RuntimeVersions& v) {
  return fmt::format("library versions: torch {}, transformers {} (--torch-version, "
                     "--transformers-version)",
                     LibraryVersionName(v.torch), LibraryVersionName(v.transformers));
}

bool ForeachAdamwByDefault(const RuntimeVersions& v) { return v.torch >= LibraryVersion{2, 0}; }

uint32_t ForeachAdamwStateCopies(const RuntimeVersions& v) {
  return v.torch < LibraryVersion{2, 0} ? 2 : 1;
}

bool ZeroGradSetsToNoneByDefault(const RuntimeVersions& v) {
  return v.torch >= LibraryVersion{2, 0};
}

bool LossCopiesShiftedLogits(const RuntimeVersions& v) {
  return v.transformers < LibraryVersion{4, 50};
}

std::string_view Mamba2ScanName(Mamba2Scan scan) {
  return scan == Mamba2Scan::kTorch ? "torch" : "kernels";
}

Result<Mamba2Scan> ParseMamba2Scan(std::string_view text, std::string_view flag) {
  if (text == "kernels" || text == "mamba_ssm" || text == "mamba-ssm") return Mamba2Scan::kKernels;
  if (text == "torch") return Mamba2Scan::kTorch;
  return MakeError("{} {}: expected kernels (mamba_ssm installed) or torch (no mamba_ssm, CPU)",
                   flag, text);
}

}  // namespace memfit
