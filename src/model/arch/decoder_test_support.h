#pragma once
// Helpers for the GPT-style decoder builder tests: build a model from config text, find tensors.

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "memfit/architecture.h"
#include "memfit/model.h"

namespace memfit::arch::testing {

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

// Sum of the resident bytes of buffers (non-parameters).
inline uint64_t BufferBytes(const Model& model) { return ComputeTotals(model).buffer_bytes; }

}  // namespace memfit::arch::testing
