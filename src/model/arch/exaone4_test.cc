#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

// Olmo2's layer without an input norm, per-head q/k norms. Per layer: q 8x8 = 64, k 8x4 = 32,
// v 32, o 64, q_norm 4, k_norm 4, gate/up/down 3x8x12 = 288, post-attention and post-feed-forward
// norms 2x8: 504. Two layers 1008 + embed 80 + norm 8 + untied lm_head 80 (Exaone4Config
// default) = 1176 parameters, float32: 4704 bytes.
TEST(Exaone4Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyDecoder("exaone4"), 1176u, 4704u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.1.self_attn.q_norm.weight", {4});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.input_layernorm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.0.post_feedforward_layernorm.weight"), nullptr);
  // sliding_window absent: the class default 4096 with pattern 4 (layers 0-2 of 4 slide).
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kSliding);
  EXPECT_EQ(m->hp.layers[1].window_tokens, 4096u);
}

TEST(Exaone4Builder, SlidingPatterns) {
  auto j = TinyDecoder("exaone4");
  j["sliding_window"] = nullptr;  // EXAONE-4.0-1.2B: no sliding layers
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kFull);
  j["sliding_window"] = 16;
  j["sliding_window_pattern"] = 2;  // every 2nd layer global
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  testing::ExpectLayer(m->hp, 0, {.attention = AttentionKind::kSliding, .window_tokens = 16u});
  testing::ExpectLayer(m->hp, 1, {.attention = AttentionKind::kFull});
  j["sliding_window_pattern"] = "LLLG";  // the last layer is always global
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kSliding);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kFull);
  j["layer_types"] = {"full_attention", "sliding_attention"};
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kFull);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kSliding);
}

TEST(Exaone4Builder, HostileConfigsNameTheField) {
  testing::ExpectHostileRejected("exaone4");
  auto j = TinyDecoder("exaone4");
  j["sliding_window_pattern"] = 0;
  testing::ExpectError(j, "sliding_window_pattern");
  j["sliding_window_pattern"] = "LXG";
  testing::ExpectError(j, "sliding_window_pattern");
}

// EXAONE-4.0-1.2B (config in ../shared/eval/recent, hyperparameters inlined): the model card's
// 1.28B parameters, 1.07B without embeddings (tied). Embeddings 102400 x 2048 = 209,715,200;
// per layer q and o 2 x 2048 x 2048, k and v 2 x 2048 x 512, q/k norms 2 x 64, MLP 3 x 2048 x
// 4096, two norms 2 x 2048: 35,655,808; 30 layers + final norm 2048 = 1,069,676,288.
TEST(Exaone4Builder, Exaone4_1_2BMatchesTheModelCard) {
  auto m = BuildJson({{"model_type", "exaone4"},
                      {"architectures", {"Exaone4ForCausalLM"}},
                      {"vocab_size", 102400},
                      {"hidden_size", 2048},
                      {"head_dim", 64},
                      {"intermediate_size", 4096},
                      {"num_hidden_layers", 30},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 8},
                      {"sliding_window", nullptr},
                      {"tie_word_embeddings", true},
                      {"dtype", "float16"}});
  ASSERT_TRUE(m) << m.error().message;
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 1279391488u);
  EXPECT_EQ(t.parameters - 102400u * 2048u, 1069676288u);
  EXPECT_EQ(t.stored_bytes, 2u * 1279391488u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
