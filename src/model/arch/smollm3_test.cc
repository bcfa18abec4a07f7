#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

// Llama tensors, tied by default (SmolLM3Config tie_word_embeddings = True). Per layer: input
// norm 8, q 8x8 = 64, k 8x4 = 32, v 32, o 64, gate/up/down 3x8x12 = 288, post norm 8: 496.
// Two layers 992 + embed 10x8 = 80 + norm 8 = 1080 parameters, float32: 4320 stored bytes; the
// lm_head is tied (not stored) and the one rotary inv_freq [2] is non-persistent.
TEST(SmolLm3Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyDecoder("smollm3"), 1080u, 4320u);
  ASSERT_TRUE(m);
  const Tensor* head = FindTensor(*m, "lm_head.weight");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->tied_to, "model.embed_tokens.weight");
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0, {.attention = AttentionKind::kFull});
  testing::ExpectLayer(m->hp, 1, {.head_dim_k = 4u, .intermediate_size = 12u});
  EXPECT_NE(FindTensor(*m, "model.rotary_emb.inv_freq"), nullptr);
}

// SmolLM3Config: without layer_types, NoPE layers slide when use_sliding_window is set. NoPE
// layers: every no_rope_layer_interval-th (interval 2: layer 1), or the 0s of no_rope_layers.
TEST(SmolLm3Builder, SlidingNoPeLayers) {
  auto j = TinyDecoder("smollm3");
  j["use_sliding_window"] = true;
  j["sliding_window"] = 4;
  j["no_rope_layer_interval"] = 2;
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  testing::ExpectLayer(m->hp, 0, {.attention = AttentionKind::kFull});
  testing::ExpectLayer(m->hp, 1, {.attention = AttentionKind::kSliding, .window_tokens = 4u});
  j["no_rope_layers"] = {0, 1};
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kSliding);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kFull);
  j["layer_types"] = {"full_attention", "full_attention"};  // the real configs list them
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kFull);
  j["use_sliding_window"] = false;
  j.erase("layer_types");
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kFull);
}

TEST(SmolLm3Builder, HostileConfigsNameTheField) {
  testing::ExpectHostileRejected("smollm3");
  testing::ExpectPatchRejected(TinyDecoder("smollm3"), {{"no_rope_layers", {1}}}, "no_rope_layers");
  testing::ExpectPatchRejected(TinyDecoder("smollm3"), {{"no_rope_layer_interval", 0}},
                               "no_rope_layer_interval");
  testing::ExpectPatchRejected(TinyDecoder("smollm3"), {{"layer_types", {"full_attention"}}},
                               "layer_types");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
