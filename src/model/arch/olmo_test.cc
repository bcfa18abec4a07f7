#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

// Tiny olmo: no norm tensors; attention 192 + mlp 288 = 480 per layer; 960 + embed 80 +
// lm_head 80 = 1120.
TEST(OlmoBuilder, OlmoHasNoNormTensors) {
  auto m = testing::BuildCounted(TinyDecoder("olmo"), 1120u);
  ASSERT_TRUE(m);
  EXPECT_EQ(FindTensor(*m, "model.norm.weight"), nullptr);
}

// olmo2: + q_norm [8] + k_norm [4] + two RMSNorms 16 = 508 per layer; 1016 + 80 + 8 + 80 = 1184.
TEST(OlmoBuilder, Olmo2CountsByHand) {
  auto m = testing::BuildCounted(TinyDecoder("olmo2"), 1184u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.0.self_attn.k_norm.weight", {4});
}

// olmo3: olmo2's tensors (1184 parameters); without "layer_types" every 4th layer is global and
// the rest slide over "sliding_window" (default 4096).
TEST(OlmoBuilder, Olmo3IsOlmo2WithSlidingLayers) {
  auto j = TinyDecoder("olmo3");
  j["num_hidden_layers"] = 4;
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 4 * 508u + 168);
  ASSERT_EQ(m->hp.layers.size(), 4u);
  testing::ExpectLayer(m->hp, 0, {.attention = AttentionKind::kSliding, .window_tokens = 4096u});
  testing::ExpectLayer(m->hp, 3, {.attention = AttentionKind::kFull});
  j["layer_types"] = {"full_attention", "sliding_attention", "full_attention", "full_attention"};
  j["sliding_window"] = 16;
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kFull);
  EXPECT_EQ(m->hp.layers[1].window_tokens, 16u);
  testing::ExpectHostileRejected("olmo3");
}

// cohere: LayerNorm weight 8 + 192 + 288 = 488 per layer; 976 + 80 + 8 = 1064 (tied).
// use_qk_norm adds q_norm [2, 4] and k_norm [1, 4]: +12 per layer.
TEST(OlmoBuilder, CohereCountsByHand) {
  auto j = TinyDecoder("cohere");
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1064u);
  j["use_qk_norm"] = true;
  m = BuildJson(j);
  ASSERT_TRUE(m);
  EXPECT_EQ(ComputeTotals(*m).parameters, 1088u);
  j = TinyDecoder("cohere2");
  j["sliding_window"] = 4;
  j["sliding_window_pattern"] = 2;
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1064u);
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kSliding);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kFull);
}

TEST(OlmoBuilder, HostileConfigsNameTheField) {
  testing::ExpectHostileRejected("olmo");
  testing::ExpectHostileRejected("olmo2");
  testing::ExpectHostileRejected("cohere");
  testing::ExpectHostileRejected("cohere2");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
