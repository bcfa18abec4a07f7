#include "model/arch/repeated_modules.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "model/arch/mlx_quantization.h"

namespace memfit::arch {
namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Whether a skip pattern (plain substring or '*' glob) could tell <prefix><k>... from
// <prefix>0...: only through a run of digits in one of its literal pieces standing where the
// index stands, i.e. with the literal text before the run (up to a '*' or the pattern's start)
// ending `prefix`. A pattern with no digit cannot: its literal pieces never cover a digit, and
// '*' matches any index alike (the same holds segment-wise, where '*' is a whole segment).
bool MaySeeIndex(std::string_view pattern, std::string_view prefix) {
  size_t piece_start = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '*') {
      piece_start = i + 1;
      continue;
    }
    if (!IsDigit(pattern[i]) || (i > piece_start && IsDigit(pattern[i - 1]))) continue;
    const std::string_view before = pattern.substr(piece_start, i - piece_start);
    if (prefix.ends_with(before)) return true;
  }
  return false;
}

}  // namespace

bool IndexBlind(const Quantization& q, const std::string& path) {
  if (q.method == QuantMethod::kNone) return true;
  if (q.method == QuantMethod::kMlx) {
    // An MLX block may list one module below `path` (mlx_quantization.h).
    const auto mlx = CurrentMlxQuantization();
    return !mlx || std::none_of(mlx->modules.begin(), mlx->modules.end(), [&](const auto& entry) {
      return entry.first.starts_with(path + ".");
    });
  }
  const std::vector<std::string> prefixes = CheckpointNames(q, path + ".");
  if (q.method == QuantMethod::kMixed) {
    for (const auto& [module, method] : q.per_module) {
      for (const auto& prefix : prefixes) {
        if (module.starts_with(prefix)) return false;
      }
    }
  }
  if (q.skip.empty()) return true;
  SkipIndex local;
  const SkipIndex& index = q.skip_index ? *q.skip_index : (local = IndexSkips(q.skip));
  if (!index.regexes.empty()) return false;
  auto sees = [&](std::string_view pattern) {
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](const std::string& p) { return MaySeeIndex(pattern, p); });
  };
  for (const auto& pattern : index.plain) {
    if (sees(pattern)) return false;
  }
  for (const auto& [prefix, patterns] : index.by_prefix) {
    for (const auto& pattern : patterns) {
      if (sees(pattern)) return false;
    }
  }
  return true;
}

void RepeatedModules(ModelBuilder& b, const Quantization& q, const std::string& path,
                     uint64_t count, const std::function<void(const std::string& module)>& emit) {
  uint64_t next = 0;
  if (b.compact_repeats() && count >= 2 && IndexBlind(q, path)) {
    const size_t first = b.model().tensors.size();
    emit(Layer(path, 0));
    next = 1;
    if (b.failed() || b.MarkRepeat(first, count, path.size() + 1)) return;
  }
  for (uint64_t k = next; k < count && !b.failed(); ++k) emit(Layer(path, k));
}

}  // namespace memfit::arch
