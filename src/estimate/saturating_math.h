// Saturating arithmetic for the scan terms (Mamba-1, Mamba-2): a product or sum that overflows
// becomes UINT64_MAX, which the overflow check on the estimate's total then refuses.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "memfit/checked_math.h"

namespace memfit::estimate::saturating {

inline uint64_t Mul(std::initializer_list<uint64_t> xs) {
  uint64_t v = 1;
  for (uint64_t x : xs) v = CheckedMul(v, x).value_or(UINT64_MAX);
  return v;
}

inline uint64_t Add(std::initializer_list<uint64_t> xs) {
  uint64_t v = 0;
  for (uint64_t x : xs) v = CheckedAdd(v, x).value_or(UINT64_MAX);
  return v;
}

}  // namespace memfit::estimate::saturating
