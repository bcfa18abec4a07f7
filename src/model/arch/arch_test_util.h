#pragma once
// Test helpers for the architecture builders: a config from JSON text, built through the registry.

#include <string>

#include <gtest/gtest.h>

#include "memfit/architecture.h"
#include "memfit/estimate_load.h"
#include "memfit/hf_config.h"

namespace memfit::arch_test {

inline Result<Model> Build(const std::string& json, const BuildOptions& options = {}) {
  auto config = HfConfig::Parse(json, "config.json");
  if (!config) return config.error();
  return BuildFromConfig(*config, options);
}

// Parameters of one multimodal component (tied ones once).
inline uint64_t ComponentParameters(const Model& m, const std::string& component) {
  uint64_t n = 0;
  for (const auto& t : m.tensors) {
    if (t.component == component && t.kind == TensorKind::kParameter && t.tied_to.empty() &&
        !t.base_only) {
      n += t.numel;
    }
  }
  return n;
}

inline const Tensor* FindTensor(const Model& m, const std::string& name) {
  for (const auto& t : m.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace memfit::arch_test
