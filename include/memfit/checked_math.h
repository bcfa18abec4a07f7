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

// ceil(a / b); a when b is 0 (a divisor of 0 means "not split").
[[nodiscard]] constexpr uint64_t CeilDiv(uint64_t a, uint64_t b) {
  return b == 0 ? a : a / b + (a % b != 0);
}

// ceil(a / b); 0 when b is 0 (nothing to split into).
[[nodiscard]] constexpr uint64_t CeilDivOrZero(uint64_t a, uint64_t b) {
  return b == 0 ? 0 : a / b + (a % b != 0);
}

// Saturating sum and product: UINT64_MAX on overflow, which the overflow check on an estimate's
// total then refuses. For terms where checking every step by hand would bury the formula.
[[nodiscard]] inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return CheckedAdd(a, b).value_or(UINT64_MAX);
}
[[nodiscard]] inline uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  return CheckedMul(a, b).value_or(UINT64_MAX);
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

// A uint64_t that remembers overflow, for formulas over untrusted sizes where checking every step
// by hand would bury the formula (the llama.cpp compute-buffer model, per-device totals): a + or *
// that overflows, or that has an overflowed operand, gives an overflowed result. Check
// overflowed() once at the end; value() is meaningless after an overflow.
class CheckedU64 {
 public:
  constexpr CheckedU64(uint64_t value = 0) : value_(value) {}  // NOLINT(google-explicit-constructor)
  bool overflowed() const { return overflowed_; }
  uint64_t value() const { return value_; }

  friend CheckedU64 operator+(CheckedU64 a, CheckedU64 b) {
    CheckedU64 r;
    r.overflowed_ = __builtin_add_overflow(a.value_, b.value_, &r.value_) || a.overflowed_ || b.overflowed_;
    return r;
  }
  friend CheckedU64 operator*(CheckedU64 a, CheckedU64 b) {
    CheckedU64 r;
    r.overflowed_ = __builtin_mul_overflow(a.value_, b.value_, &r.value_) || a.overflowed_ || b.overflowed_;
    return r;
  }
  CheckedU64& operator+=(CheckedU64 b) { return *this = *this + b; }
  // The larger value; overflowed when either is.
  friend CheckedU64 Max(CheckedU64 a, CheckedU64 b) {
    CheckedU64 r = a.value_ >= b.value_ ? a : b;
    r.overflowed_ = a.overflowed_ || b.overflowed_;
    return r;
  }

 private:
  uint64_t value_ = 0;
  bool overflowed_ = false;
};

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
