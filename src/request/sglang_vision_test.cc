// SglangVisionFor (request/request_options.h): what SGLang's mem_fraction_static rule reads from
// a config.json's vision_config, keys absent taking its getattr defaults 24 and 1024.

#include <gtest/gtest.h>

#include "base/error_test_util.h"
#include "memfit/hf_config.h"
#include "request/request_options.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

ModelInputs WithConfig(std::string_view json) {
  ModelInputs inputs;
  auto config = HfConfig::Parse(json, "config.json");
  EXPECT_TRUE(config) << config.error().message;
  if (config) inputs.config = *config;
  return inputs;
}

TEST(SglangVision, ReadsTheVisionConfigsDepthAndWidth) {
  auto v = SglangVisionFor(WithConfig(
      R"({"model_type": "llava", "vision_config": {"num_hidden_layers": 27, "hidden_size": 1152}})"));
  ASSERT_TRUE(v);
  ASSERT_TRUE(v->has_value());
  EXPECT_EQ((*v)->num_hidden_layers, 27u);
  EXPECT_EQ((*v)->hidden_size, 1152u);
  EXPECT_EQ((*v)->defaulted, "");
}

// Qwen-VL's vision_config says "depth": SGLang's getattr finds no num_hidden_layers and takes 24.
TEST(SglangVision, AbsentKeysTakeSglangsDefaultsAndAreNamed) {
  auto v = SglangVisionFor(WithConfig(
      R"({"model_type": "qwen3_vl", "vision_config": {"depth": 27, "hidden_size": 1152}})"));
  ASSERT_TRUE(v && v->has_value());
  EXPECT_EQ((*v)->num_hidden_layers, 24u);
  EXPECT_EQ((*v)->hidden_size, 1152u);
  EXPECT_EQ((*v)->defaulted, "num_hidden_layers");
  v = SglangVisionFor(WithConfig(R"({"model_type": "pixtral", "vision_config": {}})"));
  ASSERT_TRUE(v && v->has_value());
  EXPECT_EQ((*v)->defaulted, "num_hidden_layers and hidden_size");
}

TEST(SglangVision, NoVisionConfigNoAdjustment) {
  auto v = SglangVisionFor(WithConfig(R"({"model_type": "llama", "hidden_size": 8})"));
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->has_value());
  v = SglangVisionFor(ModelInputs{});  // a checkpoint without config.json
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->has_value());
}

TEST(SglangVision, AnAbsurdValueIsRefusedWithItsKey) {
  auto v = SglangVisionFor(WithConfig(R"({"vision_config": {"hidden_size": -3}})"));
  testing::ExpectErrorContains(v, "hidden_size");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
