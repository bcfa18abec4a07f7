#pragma once
// Test helpers for the architecture builders: configs from JSON, built through the registry.

#include <optional>
#include <string>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"
#include "memfit/estimate_load.h"
#include "memfit/hf_config.h"
#include "model/arch/decoder_test_support.h"
#include "test_support.h"

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

using arch::testing::FindTensor;

}  // namespace memfit::arch_test


namespace memfit::arch::testing {

// The tiny decoder most family tests start from: 2 layers, hidden 8, 2 heads of 4, 1 KV head,
// intermediate 12, vocab 10, float32.
inline nlohmann::json TinyDecoder(const std::string& model_type) {
  return {{"model_type", model_type}, {"vocab_size", 10}, {"hidden_size", 8},
          {"num_hidden_layers", 2}, {"num_attention_heads", 2}, {"num_key_value_heads", 1},
          {"intermediate_size", 12}, {"max_position_embeddings", 16},
          {"torch_dtype", "float32"}};
}

inline Result<Model> BuildJson(const nlohmann::json& j, const BuildOptions& options = {}) {
  auto config = HfConfig::FromJson(j, "config.json");
  if (!config) return config.error();
  return BuildFromConfig(*config, options);
}

// The config.json of a folder of ../shared/eval ("recent/<org__name>", "models/<org__name>")
// built through the registry; nullopt when the folder is absent. A config that is there but
// does not parse or build fails the calling test.
inline std::optional<Model> BuildEvalConfig(const std::string& sub) {
  auto dir = memfit::testing::EvalDir();
  if (!dir) return std::nullopt;
  auto text = memfit::testing::ReadFile(*dir + "/" + sub + "/config.json");
  if (!text) return std::nullopt;
  auto config = HfConfig::Parse(*text, sub);
  EXPECT_TRUE(config) << config.error().message;
  if (!config) return std::nullopt;
  auto model = BuildFromConfig(*config);
  EXPECT_TRUE(model) << model.error().message;
  if (!model) return std::nullopt;
  return std::move(*model);
}

// Expects the build to fail with a message containing `needle` (the field's name).
inline void ExpectError(const nlohmann::json& j, const std::string& needle) {
  auto model = BuildJson(j);
  ASSERT_FALSE(model) << j.dump();
  EXPECT_NE(model.error().message.find(needle), std::string::npos) << model.error().message;
}

// The hostile configs every family must reject with a message naming the field.
inline void ExpectHostileRejected(const std::string& model_type) {
  auto missing = TinyDecoder(model_type);
  missing.erase("hidden_size");
  ExpectError(missing, "hidden_size");
  auto zero = TinyDecoder(model_type);
  zero["num_attention_heads"] = 0;
  ExpectError(zero, "num_attention_heads");
  auto odd = TinyDecoder(model_type);
  odd["hidden_size"] = 9;
  ExpectError(odd, "hidden_size");
  auto absurd = TinyDecoder(model_type);
  absurd["vocab_size"] = uint64_t{1} << 50;
  ExpectError(absurd, "vocab_size");
  auto wrong = TinyDecoder(model_type);
  wrong["num_hidden_layers"] = "two";
  ExpectError(wrong, "num_hidden_layers");
}

}  // namespace memfit::arch::testing
