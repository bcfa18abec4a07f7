// DescribeModel's `source` line says how the weights were counted: an exact architecture builder,
// or the approximate generic decoder for a model_type memfit has no builder for.

#include <gtest/gtest.h>

#include "memfit/describe.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

Model Describe(const char* json) {
  auto config = HfConfig::Parse(json, "config.json");
  EXPECT_TRUE(config) << config.error().message;
  auto model = DescribeModel(ModelInputs{.name = "m", .config = *config});
  EXPECT_TRUE(model) << model.error().message;
  return model ? *model : Model{};
}

constexpr const char* kLlama = R"({"model_type":"llama","architectures":["LlamaForCausalLM"],
  "vocab_size":16,"hidden_size":8,"intermediate_size":12,"num_hidden_layers":1,
  "num_attention_heads":2,"num_key_value_heads":1,"torch_dtype":"float32"})";

TEST(DescribeSource, ExactBuilderSaysSo) {
  EXPECT_EQ(Describe(kLlama).source, "config.json (architecture builder)");
}

TEST(DescribeSource, UnknownModelTypeSaysApproximate) {
  std::string unknown = kLlama;
  unknown.replace(unknown.find("\"llama\""), 7, "\"no_such_family\"");
  unknown.replace(unknown.find("LlamaForCausalLM"), 16, "NoSuchForCausalLM");
  Model m = Describe(unknown.c_str());
  EXPECT_EQ(m.source, "config.json (generic decoder: approximate)");
  ASSERT_FALSE(m.assumptions.empty());
  EXPECT_EQ(m.assumptions.front().rfind("approximate: no builder for model_type", 0), 0u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
