#pragma once
// Helpers for the GPT-style decoder builder tests: build a model from config text, find tensors.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error_test_util.h"
#include "memfit/architecture.h"
#include "memfit/model.h"

namespace memfit::arch::testing {

using memfit::testing::ExpectErrorContains;

inline Result<Model> BuildText(std::string_view json, const BuildOptions& options = {}) {
  auto config = HfConfig::Parse(json, "config.json");
  if (!config) return config.error();
  return BuildFromConfig(*config, options);
}

inline const Tensor* FindTensor(const Model& model, std::string_view name) {
  for (const auto& t : model.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// Expects `model` to hold a tensor `name` of this shape; a failure names the tensor and the
// calling line.
// The calling line comes from __builtin_FILE/__builtin_LINE: clang 14 with libstdc++ 12 (the
// sanitizer build) has no std::source_location.
inline void ExpectShape(const Model& model, std::string_view name,
                        const std::vector<uint64_t>& shape, const char* file = __builtin_FILE(),
                        int line = __builtin_LINE()) {
  ::testing::ScopedTrace trace(file, line, "tensor " + std::string(name));
  const Tensor* t = FindTensor(model, name);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->shape, shape);
}

// Sum of the resident bytes of buffers (non-parameters).
inline uint64_t BufferBytes(const Model& model) { return ComputeTotals(model).buffer_bytes; }

}  // namespace memfit::arch::testing
