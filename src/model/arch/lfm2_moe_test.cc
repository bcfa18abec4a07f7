#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyLfm2Moe() {
  return testing::TinyDecoderWith("lfm2_moe",
                                  {{"architectures", {"Lfm2MoeForCausalLM"}},
                                   {"moe_intermediate_size", 4},
                                   {"num_experts", 3},
                                   {"num_experts_per_tok", 2},
                                   {"num_dense_layers", 1},
                                   {"use_expert_bias", true},
                                   {"conv_L_cache", 3},
                                   {"layer_types", {"conv", "full_attention"}},
                                   {"max_position_embeddings", nullptr}});
}

// Layer 0 (short conv, dense): conv 8 x 1 x 3 = 24, in_proj 8 x 24 = 192, out_proj 64,
// w1/w3/w2 3 x 8 x 12 = 288 (intermediate_size as is), operator_norm + ffn_norm 16: 584.
// Layer 1 (attention, MoE): q 64, k 32, v 32, out_proj 64, q/k_layernorm 2 x 4 = 200; gate
// 3 x 8 = 24; experts 3 x (3 x 8 x 4) = 288; norms 16: 528 (+ expert_bias [3], a buffer).
// Embeddings 80 + embedding_norm 8, tied head: 1200 parameters; 1200 x 4 + 3 x 4 (float32
// expert_bias) = 4812 bytes.
TEST(Lfm2MoeBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyLfm2Moe(), 1200u, 4812u);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0,
                       {.mixer = LayerMixer::kShortConv, .moe = false, .intermediate_size = 12u});
  testing::ExpectLayer(m->hp, 1, {.attention = AttentionKind::kFull, .moe = true});
  EXPECT_EQ(m->hp.num_experts, 3u);
  EXPECT_EQ(m->hp.experts_per_token, 2u);
  EXPECT_EQ(m->hp.moe_intermediate_size, 4u);
  testing::ExpectShape(*m, "model.layers.1.feed_forward.experts.2.w1.weight", {4, 8});
  const Tensor* bias = FindTensor(*m, "model.layers.1.feed_forward.expert_bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->dtype, Dtype::kF32);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.feed_forward.gate.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "lm_head.weight")->tied_to, "model.embed_tokens.weight");
}

TEST(Lfm2MoeBuilder, ExpertBiasAndDenseLayersFollowTheConfig) {
  auto j = TinyLfm2Moe();
  j["use_expert_bias"] = false;  // no buffer: 1200 x 4 bytes
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 4800u);
  EXPECT_EQ(FindTensor(*m, "model.layers.1.feed_forward.expert_bias"), nullptr);
  j = TinyLfm2Moe();
  j["num_dense_layers"] = 2;  // layer 1 dense: 1200 - 24 - 288 + 288 = 1176
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1176u);
  EXPECT_FALSE(m->hp.layers[1].moe);
}

TEST(Lfm2MoeBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyLfm2Moe(), {{"layer_types", nullptr}}, "layer_types");
  testing::ExpectPatchRejected(TinyLfm2Moe(), {{"num_experts", 0}}, "num_experts");
  testing::ExpectPatchRejected(TinyLfm2Moe(), {{"intermediate_size", nullptr}},
                               "intermediate_size");
  testing::ExpectPatchRejected(TinyLfm2Moe(), {{"layer_types", {"conv"}}}, "layer_types");
}

// LiquidAI/LFM2-8B-A1B's config as a third-party port inlines it (the transformers defaults of
// Lfm2MoeConfig with 24 layers; attention at layers 2, 6, 10, 14, 18, 21), checked against the
// model card's "8.3B total parameters":
//   embeddings 65,536 x 2048 = 134,217,728 (tied) + embedding_norm 2048;
//   18 conv mixers of 2048 x 3 + 2048 x 6144 + 2048 x 2048 = 16,783,360;
//   6 attention mixers of 4,194,304 (q) + 2 x 1,048,576 (k, v) + 4,194,304 (out) + 128 =
//   10,485,888; 2 dense FFNs of 3 x 2048 x 7168 = 44,040,192; 22 sparse FFNs of gate 32 x 2048 =
//   65,536 + 32 x 3 x 2048 x 1792 = 352,321,536; 24 x 2 x 2048 = 98,304 norms.
// 302,100,480 + 62,915,328 + 88,080,384 + 7,752,515,584 + 98,304 + 134,219,776 = 8,339,929,856,
// the Hub's BF16 safetensors count; its F32 count, 704, is the 22 x 32 expert_bias buffers. Stored:
// 8,339,929,856 x 2 + 704 x 4 = 16,679,862,528 bytes, the total of the four weight shards as a
// public conversion recipe for LiquidAI/LFM2-8B-A1B records it.
TEST(Lfm2MoeBuilder, Lfm2_8bA1bMatchesTheModelCard) {
  nlohmann::json layer_types = nlohmann::json::array();
  for (int i = 0; i < 24; ++i) {
    const bool attention = i == 2 || i == 6 || i == 10 || i == 14 || i == 18 || i == 21;
    layer_types.push_back(attention ? "full_attention" : "conv");
  }
  auto m = BuildJson({{"model_type", "lfm2_moe"},
                      {"architectures", {"Lfm2MoeForCausalLM"}},
                      {"vocab_size", 65536},
                      {"hidden_size", 2048},
                      {"intermediate_size", 7168},
                      {"moe_intermediate_size", 1792},
                      {"num_hidden_layers", 24},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 8},
                      {"conv_bias", false},
                      {"conv_L_cache", 3},
                      {"num_dense_layers", 2},
                      {"num_experts", 32},
                      {"num_experts_per_tok", 4},
                      {"use_expert_bias", true},
                      {"layer_types", layer_types},
                      {"torch_dtype", "bfloat16"}});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 8339929856u);
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 16679862528u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
