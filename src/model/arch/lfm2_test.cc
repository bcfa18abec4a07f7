#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyLfm2() {
  return testing::TinyDecoderWith("lfm2",
                                  {{"architectures", {"Lfm2ForCausalLM"}},
                                   {"block_ff_dim", 15},
                                   {"block_multiple_of", 4},
                                   {"block_ffn_dim_multiplier", 1.0},
                                   {"block_auto_adjust_ff_dim", true},
                                   {"conv_L_cache", 3},
                                   {"full_attn_idxs", {1}},
                                   {"intermediate_size", nullptr},
                                   {"max_position_embeddings", nullptr}});
}

// FFN width: int(2 x 15 / 3) = 10, x 1.0, rounded up to a multiple of 4: 12.
// Layer 0 (short conv): conv 8 x 1 x 3 = 24, in_proj 8 x 24 = 192, out_proj 64, w1/w3/w2
// 3 x 8 x 12 = 288, operator_norm + ffn_norm 16: 584.
// Layer 1 (attention): q 64, k 32, v 32, out_proj 64, q/k_layernorm 2 x 4, FFN 288, norms 16: 504.
// Embeddings 80 + embedding_norm 8, lm_head tied: 1176 parameters, 4704 bytes in float32.
TEST(Lfm2Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyLfm2(), 1176u, 4704u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.intermediate_size, 12u);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0,
                       {.attention = AttentionKind::kNone,
                        .mixer = LayerMixer::kShortConv,
                        .intermediate_size = 12u,
                        .recurrent = true,
                        .conv_channels = 8u,
                        .conv_kernel = 3u,
                        .state_heads = 0u});
  testing::ExpectLayer(m->hp, 1,
                       {.attention = AttentionKind::kFull, .num_kv_heads = 1u, .head_dim_k = 4u});
  testing::ExpectShape(*m, "model.layers.0.conv.conv.weight", {8, 1, 3});
  EXPECT_NE(FindTensor(*m, "model.layers.1.self_attn.q_layernorm.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->tied_to, "model.embed_tokens.weight");
}

TEST(Lfm2Builder, FfDimRulesAndLayerTypes) {
  auto j = TinyLfm2();
  j["block_auto_adjust_ff_dim"] = false;  // block_ff_dim as is
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.intermediate_size, 15u);
  j = TinyLfm2();
  j["block_ffn_dim_multiplier"] = 1.5;  // int(1.5 x 10) = 15 -> 16
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.intermediate_size, 16u);
  j = TinyLfm2();
  j.erase("full_attn_idxs");
  j["layer_types"] = {"full_attention", "conv"};
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.layers[0].attention, AttentionKind::kFull);
  EXPECT_EQ(m->hp.layers[1].mixer, LayerMixer::kShortConv);
  j["tie_embedding"] = false;  // the original key: lm_head 80 more parameters
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1176u + 80u);
}

TEST(Lfm2Builder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyLfm2(), {{"full_attn_idxs", nullptr}}, "full_attn_idxs");
  testing::ExpectPatchRejected(TinyLfm2(), {{"full_attn_idxs", {5}}}, "full_attn_idxs");
  testing::ExpectPatchRejected(TinyLfm2(), {{"block_ff_dim", nullptr}}, "intermediate_size");
  testing::ExpectPatchRejected(TinyLfm2(), {{"block_multiple_of", 0}}, "block_multiple_of");
  // Not an integer: an error naming it, not a division by the zero Get returned (SIGFPE before).
  testing::ExpectPatchRejected(TinyLfm2(), {{"block_multiple_of", "x"}}, "block_multiple_of");
  testing::ExpectPatchRejected(TinyLfm2(), {{"conv_L_cache", 0}}, "conv_L_cache");
  testing::ExpectPatchRejected(TinyLfm2(), {{"hidden_size", uint64_t{1} << 45}}, "hidden_size");
  testing::ExpectPatchRejected(TinyLfm2(), {{"num_hidden_layers", uint64_t{1} << 40}},
                               "num_hidden_layers");
  testing::ExpectPatchRejected(TinyLfm2(), {{"block_ffn_dim_multiplier", -1.0}},
                               "block_ffn_dim_multiplier");
}

// LFM2-1.2B (../shared/eval/recent, inlined): the model card's 1.17B parameters. FFN width
// int(2 x 12288 / 3) = 8192; 10 conv layers of 67,119,104 and 6 attention layers of 60,821,632,
// embeddings 134,217,728 (tied) and embedding_norm 2048: 1,170,340,608.
TEST(Lfm2Builder, Lfm2_1_2BMatchesTheModelCard) {
  auto m = BuildJson({{"model_type", "lfm2"},
                      {"architectures", {"Lfm2ForCausalLM"}},
                      {"vocab_size", 65536},
                      {"hidden_size", 2048},
                      {"block_dim", 2048},
                      {"conv_dim", 2048},
                      {"block_ff_dim", 12288},
                      {"block_multiple_of", 256},
                      {"block_ffn_dim_multiplier", 1.0},
                      {"block_auto_adjust_ff_dim", true},
                      {"conv_L_cache", 3},
                      {"conv_bias", false},
                      {"full_attn_idxs", {2, 5, 8, 10, 12, 14}},
                      {"num_hidden_layers", 16},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 8},
                      {"torch_dtype", "bfloat16"}});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.intermediate_size, 8192u);
  EXPECT_EQ(ComputeTotals(*m).parameters, 1170340608u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
