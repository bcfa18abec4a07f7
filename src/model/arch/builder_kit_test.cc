// ModelBuilder's capacity: a model of many expert tensors is laid out once, not relocated at
// every doubling (issue 15), and the reservation never passes the tensor cap.

#include "model/arch/builder_kit.h"

#include <gtest/gtest.h>

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

HfConfig Config(const std::string& json) {
  auto config = HfConfig::Parse(json, "config.json");
  EXPECT_TRUE(config.has_value());
  return *config;
}

// Without "torch_dtype"/"dtype" the checkpoint is taken as float32, and the assumption speaks of
// the checkpoint: `inference` loads --dtype (bfloat16) whatever it says, and its title says so.
TEST(CheckpointDtype, WithoutADtypeTheCheckpointIsAssumedFloat32) {
  std::vector<std::string> said;
  EXPECT_EQ(CheckpointDtype(Config(R"({"torch_dtype": "float16"})"), said), Dtype::kF16);
  EXPECT_EQ(CheckpointDtype(Config(R"({"dtype": "bfloat16"})"), said), Dtype::kBF16);
  EXPECT_TRUE(said.empty());
  EXPECT_EQ(CheckpointDtype(Config("{}"), said), Dtype::kF32);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0],
            "config.json names no torch_dtype: the checkpoint's weights assumed float32 "
            "(transformers' default)");
}

TEST(ModelBuilder, ReservesTheConfigsExpertTensorsOncePastTheFirst4096) {
  // (2 layers + 1) x (300 experts + 8) x 12 + 4,096 = 15,184 tensors.
  ModelBuilder b(Config(R"({"torch_dtype": "bfloat16",
                            "text_config": {"num_hidden_layers": 2, "num_experts": 300}})"));
  for (int i = 0; i < 4096; ++i) b.Param("t." + std::to_string(i), {1});
  EXPECT_EQ(b.model().tensors.size(), 4096u);
  b.Param("t.4096", {1});
  EXPECT_EQ(b.model().tensors.capacity(), 15184u);
  const Tensor* first = b.model().tensors.data();
  for (int i = 4097; i < 15184; ++i) b.Param("t." + std::to_string(i), {2, 3});
  EXPECT_EQ(b.model().tensors.data(), first);  // never moved
  auto model = b.Finish();
  ASSERT_TRUE(model.has_value());
  ASSERT_EQ(model->tensors.size(), 15184u);
  EXPECT_EQ(model->tensors[4096].name, "t.4096");
  EXPECT_EQ(model->tensors.back().name, "t.15183");
  EXPECT_EQ(model->tensors.back().bytes, 12u);  // 6 bfloat16 elements
}

TEST(ModelBuilder, ReservationStopsAtTheTensorCap) {
  // 2^40 experts would ask for far more than the cap: the reservation is the cap itself.
  TensorLimitScope limit(5000);
  ModelBuilder b(Config(R"({"num_hidden_layers": 61, "n_routed_experts": 1099511627776})"));
  for (int i = 0; i < 4097; ++i) b.Param("t." + std::to_string(i), {1});
  EXPECT_EQ(b.model().tensors.capacity(), 5000u);
  for (int i = 4097; i < 5001; ++i) b.Param("t." + std::to_string(i), {1});
  auto model = b.Finish();
  ASSERT_FALSE(model.has_value());
  EXPECT_NE(model.error().message.find("more than 5000 tensors"), std::string::npos)
      << model.error().message;
}

TEST(ModelBuilder, SmallConfigsGrowAsVectorsDo) {
  // No layer or expert keys: the hint is 1 x 8 x 12 + 4,096 = 4,192; a 10-tensor model is untouched.
  ModelBuilder b(Config(R"({"torch_dtype": "float32"})"));
  for (int i = 0; i < 10; ++i) b.Param("t." + std::to_string(i), {1});
  EXPECT_LT(b.model().tensors.capacity(), 4096u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
