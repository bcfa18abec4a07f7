#pragma once
// Overflow-checked arithmetic for byte sizes computed from untrusted file data.

#include <cstdint>
#include <optional>
#include <span>

#include "memfit/result.h"

namespace memfit {

[[nodiscard]] inline std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b) {
  uint64_t out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

[[nodiscard]] inline std::optional<uint64_t> CheckedAdd(uint64_t a, uint64_t b) {
  uint64_t out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// Product of all dimensions (1 for a scalar); nullopt on overflow.
[[nodiscard]] inline std::optional<uint64_t> CheckedProduct(std::span<const uint64_t> dims) {
  uint64_t total = 1;
  for (uint64_t d : dims) {
    auto next = CheckedMul(total, d);
    if (!next) return std::nullopt;
    total = *next;
  }
  return total;
}

// Accumulates a byte total and remembers whether it ever overflowed.
class ByteSum {
 public:
  void Add(uint64_t bytes) {
    if (!CheckedAdd(total_, bytes)) overflowed_ = true;
    else total_ += bytes;
  }
  bool overflowed() const { return overflowed_; }
  uint64_t total() const { return total_; }

 private:
  uint64_t total_ = 0;
  bool overflowed_ = false;
};

}  // namespace memfit
