// Saturating sums and products over a list of terms, the estimators' one way to write a formula
// whose terms come from untrusted sizes: a sum or product that overflows becomes UINT64_MAX,
// which the overflow check on the estimate's total then refuses. The arithmetic itself is
// memfit::SaturatingAdd/SaturatingMul (memfit/checked_math.h); estimate code calls these list
// forms (Add({a, b, c}) rather than nested pairs), so a formula of several terms stays one call.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "memfit/checked_math.h"

namespace memfit::estimate::saturating {

// Left to right: once saturated the product stays UINT64_MAX, unless a later factor is 0.
inline uint64_t Mul(std::initializer_list<uint64_t> xs) {
  uint64_t v = 1;
  for (uint64_t x : xs) v = SaturatingMul(v, x);
  return v;
}

inline uint64_t Add(std::initializer_list<uint64_t> xs) {
  uint64_t v = 0;
  for (uint64_t x : xs) v = SaturatingAdd(v, x);
  return v;
}

}  // namespace memfit::estimate::saturating
