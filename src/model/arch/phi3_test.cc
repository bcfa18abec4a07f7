#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

// Tiny phi3: qkv_proj (2 + 2x1) heads x 4 = 16 rows x 8 = 128, o 64, gate_up 24x8 = 192,
// down 96, norms 16: 496 per layer; 992 + embed 80 + norm 8 + untied lm_head 80 = 1160.
TEST(Phi3Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyDecoder("phi3"), 1160u);
  ASSERT_TRUE(m);
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.head_parameters, 80u);
  testing::ExpectShape(*m, "model.layers.1.self_attn.qkv_proj.weight", {16, 8});
  // 4.42 buffers: inv_freq [head_dim / 2] per layer, not one per model.
  auto old = BuildJson(TinyDecoder("phi3"), {.buffers = BufferConvention::kTransformers442});
  ASSERT_TRUE(old);
  EXPECT_NE(FindTensor(*old, "model.layers.0.self_attn.rotary_emb.inv_freq"), nullptr);
  EXPECT_EQ(FindTensor(*old, "model.rotary_emb.inv_freq"), nullptr);
}

// Sequence classification (accelerate builds the auto_map class): score [num_labels, H] = 3x8.
TEST(Phi3Builder, SequenceClassificationHead) {
  auto j = TinyDecoder("phi3");
  j["num_labels"] = 3;
  auto m = BuildJson(j, {.head_class = "AutoModelForSequenceClassification"});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).head_parameters, 24u);
  EXPECT_NE(FindTensor(*m, "score.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "lm_head.weight"), nullptr);
  auto bad = BuildJson(j, {.head_class = "AutoModelForMaskedLM"});
  testing::ExpectErrorContains(bad, "AutoModelForMaskedLM");
}

// Tiny phimoe (2 experts): LayerNorm 16, biased q 72, k 36, v 36, o 72, gate 16, experts
// 2x(3x8x12) = 576, LayerNorm 16: 840 per layer; 1680 + 80 + norm 16 + lm_head 80 = 1856.
TEST(Phi3Builder, PhiMoeCountsByHand) {
  auto j = TinyDecoder("phimoe");
  j["num_local_experts"] = 2;
  j["num_experts_per_tok"] = 1;
  auto m = testing::BuildCounted(j, 1856u);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->hp.layers[0].moe);
  j.erase("num_local_experts");
  testing::ExpectError(j, "num_local_experts");
}

TEST(Phi3Builder, HostileConfigsNameTheField) {
  testing::ExpectHostileRejected("phi3");
  testing::ExpectPatchRejected(TinyDecoder("phi3"), {{"partial_rotary_factor", 3.0}},
                               "partial_rotary_factor");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
