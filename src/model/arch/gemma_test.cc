#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

// Tiny gemma: per layer q 8x8=64, k 8x4=32, v 32, o 64 (=192), mlp 3x8x12=288, two norms 16:
// 496; two layers 992 + embed 10x8=80 + norm 8 = 1080 parameters, lm_head tied (gemma default).
TEST(GemmaBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyDecoder("gemma"), 1080u, 1080u * 4);
  ASSERT_TRUE(m);
  ASSERT_NE(FindTensor(*m, "lm_head.weight"), nullptr);
  EXPECT_FALSE(FindTensor(*m, "lm_head.weight")->stored);
  EXPECT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kFull);
}

// gemma2 adds pre/post feed-forward norms (2x8 per layer): 1080 + 32 = 1112. Even layers slide.
TEST(GemmaBuilder, Gemma2NormsAndAlternatingWindows) {
  auto j = TinyDecoder("gemma2");
  j["sliding_window"] = 4;
  auto m = testing::BuildCounted(j, 1112u);
  ASSERT_TRUE(m);
  testing::ExpectLayer(m->hp, 0, {.attention = AttentionKind::kSliding, .window_tokens = 4u});
  testing::ExpectLayer(m->hp, 1, {.attention = AttentionKind::kFull});
}

// gemma3_text adds q_norm/k_norm [head_dim 4] per layer: 1112 + 16 = 1128. Pattern 2: layer 0
// slides, layer 1 is global. Buffers: embed_scale and two rotary inv_freq [2].
TEST(GemmaBuilder, Gemma3TextQkNormAndPattern) {
  auto j = TinyDecoder("gemma3_text");
  j["sliding_window"] = 4;
  j["sliding_window_pattern"] = 2;
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 1128u);
  EXPECT_EQ(t.buffer_bytes, 4u + 2 * 2 * 4);
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kSliding);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kFull);
  j["layer_types"] = {"full_attention", "sliding_attention"};
  m = BuildJson(j);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kFull);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kSliding);
}

// gemma-3-1b-it has no index or count in the eval set; its published parameter count (Hugging
// Face model page) is 999,885,952.
TEST(GemmaBuilder, Gemma3OneBillionMatchesPublishedCount) {
  auto m = testing::BuildEvalConfig("models/google__gemma-3-1b-it");
  if (!m) GTEST_SKIP() << "gemma-3-1b-it config absent";
  EXPECT_EQ(ComputeTotals(*m).parameters, 999885952u);
  // 26 layers, every sixth global: layers 5, 11, 17, 23.
  testing::ExpectLayer(m->hp, 5, {.attention = AttentionKind::kFull});
  testing::ExpectLayer(m->hp, 4, {.attention = AttentionKind::kSliding, .window_tokens = 512u});
}

TEST(GemmaBuilder, HostileConfigsNameTheField) {
  testing::ExpectHostileRejected("gemma");
  testing::ExpectHostileRejected("gemma2");
  testing::ExpectPatchRejected(TinyDecoder("gemma3_text"), {{"sliding_window_pattern", 0}},
                               "sliding_window_pattern");
  testing::ExpectPatchRejected(TinyDecoder("gemma3_text"), {{"layer_types", {"full_attention"}}},
                               "layer_types");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
