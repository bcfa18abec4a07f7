#pragma once
// Test helpers for the architecture builders: configs from JSON, built through the registry.

#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"
#include "memfit/estimate_load.h"
#include "memfit/hf_config.h"
#include "model/arch/decoder_test_support.h"
#include "model/layer_test_util.h"
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

// One multimodal component and the parameters it should hold (ComponentParameters).
struct ComponentCount {
  const char* component;
  uint64_t parameters;
};

// Expects each component of `m` to hold its parameters; a failure names the component and the
// calling line.
// The calling line comes from __builtin_FILE/__builtin_LINE: clang 14 with libstdc++ 12 (the
// sanitizer build) has no std::source_location.
inline void ExpectComponentParameters(const Model& m, std::initializer_list<ComponentCount> want,
                                      const char* file = __builtin_FILE(),
                                      int line = __builtin_LINE()) {
  ::testing::ScopedTrace trace(file, line, "component parameters");
  for (const auto& c : want) {
    EXPECT_EQ(ComponentParameters(m, c.component), c.parameters) << c.component;
  }
}

using arch::testing::FindTensor;

}  // namespace memfit::arch_test


namespace memfit::arch::testing {

using memfit::testing::ExpectLayer;

// The tiny decoder most family tests start from: 2 layers, hidden 8, 2 heads of 4, 1 KV head,
// intermediate 12, vocab 10, float32.
inline nlohmann::json TinyDecoder(const std::string& model_type) {
  return {{"model_type", model_type}, {"vocab_size", 10}, {"hidden_size", 8},
          {"num_hidden_layers", 2}, {"num_attention_heads", 2}, {"num_key_value_heads", 1},
          {"intermediate_size", 12}, {"max_position_embeddings", 16},
          {"torch_dtype", "float32"}};
}

// TinyDecoder(model_type) with `changes` merge-patched over it (RFC 7386): a key of `changes`
// replaces or adds that key, a null removes it. A family's tiny config then states only what it
// changes, and one that lacks a base key (say torch_dtype) says so with a null.
inline nlohmann::json TinyDecoderWith(const std::string& model_type,
                                      const nlohmann::json& changes) {
  auto j = TinyDecoder(model_type);
  j.merge_patch(changes);
  return j;
}

// The tiny vision tower the multimodal tests share (SigLIP, CLIP, Idefics and Pixtral read these
// keys): hidden 4, one layer, 2 heads of 2, intermediate 6, patch 2 over a 4 x 4 image (4
// patches); `changes` merge-patched over it.
inline nlohmann::json TinyVisionTower(const nlohmann::json& changes = nlohmann::json::object()) {
  nlohmann::json j = {{"hidden_size", 4},       {"num_hidden_layers", 1}, {"num_attention_heads", 2},
                      {"intermediate_size", 6}, {"patch_size", 2},        {"image_size", 4}};
  j.merge_patch(changes);
  return j;
}

// A float32 composite (vision-language) config around `text`, its text_config: text's own
// torch_dtype is dropped (the outer one applies); `changes` (architectures, vision_config,
// projector keys) merge-patched over it.
inline nlohmann::json TinyComposite(const std::string& model_type, nlohmann::json text,
                                    const nlohmann::json& changes) {
  text.erase("torch_dtype");
  nlohmann::json j = {
      {"model_type", model_type}, {"torch_dtype", "float32"}, {"text_config", std::move(text)}};
  j.merge_patch(changes);
  return j;
}

// The tiny DeepSeek-V3-style MLA and MoE decoder (deepseek_v3, kimi_k25's text model, mistral4):
// layer 0 dense, layer 1 two routed experts of 3 (top 1) and one shared; MLA q_lora 4, kv_lora 4,
// qk_nope 2 + qk_rope 2, v 2; `changes` merge-patched over it.
inline nlohmann::json TinyMlaMoe(const std::string& model_type, const nlohmann::json& changes) {
  auto j = TinyDecoderWith(model_type, {{"moe_intermediate_size", 3},
                                        {"n_routed_experts", 2},
                                        {"n_shared_experts", 1},
                                        {"num_experts_per_tok", 1},
                                        {"first_k_dense_replace", 1},
                                        {"q_lora_rank", 4},
                                        {"kv_lora_rank", 4},
                                        {"qk_nope_head_dim", 2},
                                        {"qk_rope_head_dim", 2},
                                        {"v_head_dim", 2}});
  j.merge_patch(changes);
  return j;
}

inline Result<Model> BuildJson(const nlohmann::json& j, const BuildOptions& options = {}) {
  auto config = HfConfig::FromJson(j, "config.json");
  if (!config) return config.error();
  return BuildFromConfig(*config, options);
}

// Builds `j` and expects it to build with these totals (stored bytes when given): the first
// check of every hand-counted tiny config. Returns the model for the test's own checks; nullopt
// (a failure already reported) when it did not build.
inline std::optional<Model> BuildCounted(const nlohmann::json& j, uint64_t parameters,
                                         std::optional<uint64_t> stored_bytes = std::nullopt,
                                         const BuildOptions& options = {}) {
  auto m = BuildJson(j, options);
  if (!m) {
    ADD_FAILURE() << m.error().message;
    return std::nullopt;
  }
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, parameters);
  if (stored_bytes) {
    EXPECT_EQ(t.stored_bytes, *stored_bytes);
  }
  return std::move(*m);
}

// The text of `file` in a folder of ../shared/eval ("recent/<org__name>", "models/<org__name>");
// nullopt when the eval folder or the file is absent.
inline std::optional<std::string> ReadEvalFile(const std::string& sub,
                                               const std::string& file = "config.json") {
  auto dir = memfit::testing::EvalDir();
  if (!dir) return std::nullopt;
  return memfit::testing::ReadFile(*dir + "/" + sub + "/" + file);
}

// That folder's config.json as JSON; nullopt when it is absent.
inline std::optional<nlohmann::json> EvalConfigJson(const std::string& sub) {
  auto text = ReadEvalFile(sub);
  if (!text) return std::nullopt;
  return nlohmann::json::parse(*text);
}

// That folder's config.json parsed; nullopt when it is absent. A config that is there but does
// not parse fails the calling test.
inline std::optional<HfConfig> ParseEvalConfig(const std::string& sub) {
  auto text = ReadEvalFile(sub);
  if (!text) return std::nullopt;
  auto config = HfConfig::Parse(*text, sub);
  EXPECT_TRUE(config) << config.error().message;
  if (!config) return std::nullopt;
  return std::move(*config);
}

// `config` built through the registry; nullopt, the calling test failed, when it does not build.
inline std::optional<Model> BuildOrFail(const HfConfig& config, const BuildOptions& options = {}) {
  auto model = BuildFromConfig(config, options);
  EXPECT_TRUE(model) << model.error().message;
  if (!model) return std::nullopt;
  return std::move(*model);
}

// That folder's config.json built through the registry; nullopt when the folder is absent. A
// config that is there but does not parse or build fails the calling test.
inline std::optional<Model> BuildEvalConfig(const std::string& sub,
                                            const BuildOptions& options = {}) {
  auto config = ParseEvalConfig(sub);
  if (!config) return std::nullopt;
  return BuildOrFail(*config, options);
}

// Whether any of `lines` contains `needle`.
inline bool HasLine(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines) {
    if (l.find(needle) != std::string::npos) return true;
  }
  return false;
}

// A real model's config.json (only the fields the builders read) and its published parameter
// count.
struct Published {
  const char* model;
  const char* config;
  uint64_t parameters;
};

// Expects each config to build with its published parameter count; a failure names the model.
inline void ExpectPublishedCounts(std::span<const Published> models) {
  for (const auto& p : models) {
    auto m = BuildJson(nlohmann::json::parse(p.config));
    ASSERT_TRUE(m) << p.model << ": " << m.error().message;
    EXPECT_EQ(ComputeTotals(*m).parameters, p.parameters) << p.model;
  }
}

// Expects the build to fail with a message containing `needle` (the field's name).
inline void ExpectError(const nlohmann::json& j, const std::string& needle) {
  auto model = BuildJson(j);
  ASSERT_FALSE(model) << j.dump();
  EXPECT_NE(model.error().message.find(needle), std::string::npos) << model.error().message;
}

// `base` with `patch` merge-patched over it (a null removes a key) must fail to build with a
// message containing `needle`; the patch is named in the failure, so one line states one case.
inline void ExpectPatchRejected(const nlohmann::json& base, const nlohmann::json& patch,
                                const std::string& needle) {
  SCOPED_TRACE("patch " + patch.dump());
  auto j = base;
  j.merge_patch(patch);
  ExpectError(j, needle);
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
