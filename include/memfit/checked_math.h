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
