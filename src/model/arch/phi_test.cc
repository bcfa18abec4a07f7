#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;
using testing::TinyDecoder;

// Tiny phi: LayerNorm 16, q 64+8, k 32+4, v 32+4, dense 64+8 (=216), fc1 96+12, fc2 96+8
// (=212): 444 per layer (no post-attention norm: parallel block); 888 + embed 80 +
// final_layernorm 16 + lm_head 80 + bias 10 = 1074. Rotary: partial 0.5 of head_dim 4 -> [1].
TEST(PhiBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyDecoder("phi"), 1074u);
  ASSERT_TRUE(m);
  EXPECT_NE(FindTensor(*m, "lm_head.bias"), nullptr);
  testing::ExpectShape(*m, "model.rotary_emb.inv_freq", {1});
}

// Tiny stablelm: LayerNorm 16, q 64, k 32, v 32, o 64, mlp 288, LayerNorm 16: 512 per layer;
// 1024 + 80 + norm 16 + lm_head 80 = 1200. qk_layernorm adds 2 + 1 per-head norms of 4 per
// layer: +24.
TEST(PhiBuilder, StableLmCountsByHand) {
  auto j = TinyDecoder("stablelm");
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1200u);
  j["qk_layernorm"] = true;
  m = BuildJson(j);
  ASSERT_TRUE(m);
  EXPECT_EQ(ComputeTotals(*m).parameters, 1224u);
  EXPECT_NE(FindTensor(*m, "model.layers.0.self_attn.q_layernorm.norms.1.weight"), nullptr);
}

// stablelm_epoch (remote code): stablelm's tensors (1200 parameters; use_qkv_bias: + 8 + 4 + 4
// per layer), the rotary width from rope_pct: int(4 x 0.5) = 2 -> inv_freq [1].
TEST(PhiBuilder, StableLmEpochCountsByHand) {
  auto j = TinyDecoder("stablelm_epoch");
  j["rope_pct"] = 0.5;
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1200u);
  testing::ExpectShape(*m, "model.rotary_emb.inv_freq", {1});
  j["use_qkv_bias"] = true;
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1232u);
  testing::ExpectHostileRejected("stablelm_epoch");
}

// stabilityai/stablelm-3b-4e1t (model_type stablelm_epoch; config fields the builder reads): its
// model card gives 2,795,443,200 parameters.
TEST(PhiBuilder, StableLm3bPublishedCount) {
  auto m = BuildJson(nlohmann::json::parse(
      R"({"model_type":"stablelm_epoch","architectures":["StableLMEpochForCausalLM"],
         "hidden_size":2560,"intermediate_size":6912,"num_hidden_layers":32,
         "num_attention_heads":32,"num_key_value_heads":32,"vocab_size":50304,"rope_pct":0.25,
         "tie_word_embeddings":false,"torch_dtype":"bfloat16"})"));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 2795443200u);
}

// Tiny starcoder2 (biases on): LayerNorm 16, q 72, k 36, v 36, o 72, c_fc 108, c_proj 104,
// LayerNorm 16: 460 per layer; 920 + 80 + norm 16 = 1016, lm_head tied.
TEST(PhiBuilder, Starcoder2CountsByHand) {
  auto j = TinyDecoder("starcoder2");
  j["sliding_window"] = 4;
  auto m = testing::BuildCounted(j, 1016u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kSliding);
}

TEST(PhiBuilder, HostileConfigsNameTheField) {
  testing::ExpectHostileRejected("phi");
  testing::ExpectHostileRejected("stablelm");
  testing::ExpectHostileRejected("starcoder2");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
