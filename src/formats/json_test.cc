#include "formats/json.h"

#include <gtest/gtest.h>

#include "formats/hf_config_json.h"
#include "memfit/hf_config.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(JsonValueTest, CopiesIntoPlainJsonAsTheSameValue) {
  const JsonValue value(nlohmann::json{{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}});
  const nlohmann::json copy = value;  // the converting constructor, through adl_serializer
  EXPECT_EQ(copy, nlohmann::json::parse(R"({"quant_method": "fp8", "weight_block_size": [128, 128]})"));
  nlohmann::json assigned;
  assigned = value;
  EXPECT_EQ(assigned["weight_block_size"][1], 128);
  nlohmann::json list = nlohmann::json::array();
  list.push_back(value);
  EXPECT_EQ(list[0]["quant_method"], "fp8");
}

TEST(JsonValueTest, HfConfigRawIsTheParsedObjectAndCopiesShareIt) {
  auto config = HfConfig::Parse(R"({"model_type": "llama", "text_config": {"hidden_size": 8},
                                   "quantization_config": {"quant_method": "fp8"}})");
  ASSERT_TRUE(config.has_value()) << config.error().message;
  const nlohmann::json whole = config->raw();
  EXPECT_EQ(whole["text_config"]["hidden_size"], 8);
  const HfConfig copy = *config;
  EXPECT_EQ(&copy.raw(), &config->raw());  // immutable, so shared
  const nlohmann::json* quant = QuantizationConfigJson(copy);
  ASSERT_NE(quant, nullptr);
  EXPECT_EQ((*quant)["quant_method"], "fp8");
  EXPECT_TRUE(copy.has_quantization_config());
  auto plain = HfConfig::Parse(R"({"model_type": "llama", "quantization_config": null})");
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->has_quantization_config());
}

TEST(JsonValueTest, FromJsonRefusesANonObject) {
  auto config = HfConfig::FromJson(nlohmann::json::array({1, 2}), "x/config.json");
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().message, "x/config.json: expected a JSON object, got array");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
