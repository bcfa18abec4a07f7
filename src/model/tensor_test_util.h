#pragma once
// Test helpers: tensors for models built by hand in estimator and planner tests.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "memfit/model.h"

namespace memfit::testing {

// A tensor of `shape` and `dtype`, its element count and bytes computed.
inline Tensor ShapedTensor(std::string name, std::vector<uint64_t> shape,
                           Dtype dtype = Dtype::kF32) {
  uint64_t n = 1;
  for (auto d : shape) n *= d;
  return Tensor{.name = std::move(name), .shape = std::move(shape), .dtype = dtype, .numel = n,
                .bytes = n * DtypeBits(dtype) / 8};
}

// A one-dimensional U8 tensor of `bytes` bytes, for tests that place or count bytes only;
// `tied_to` names the tensor it shares storage with.
inline Tensor ByteTensor(std::string name, uint64_t bytes, std::string tied_to = "") {
  Tensor t;
  t.name = std::move(name);
  t.shape = {bytes};
  t.dtype = Dtype::kU8;
  t.numel = bytes;
  t.bytes = bytes;
  t.tied_to = std::move(tied_to);
  return t;
}

}  // namespace memfit::testing
