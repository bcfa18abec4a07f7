#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

// Two layers, full_attention_interval 2: layer 0 gated delta-net, layer 1 full attention.
nlohmann::json TinyQwen3Next() {
  return testing::TinyDecoderWith("qwen3_next",
                                  {{"architectures", {"Qwen3NextForCausalLM"}},
                                   {"head_dim", 4},
                                   {"full_attention_interval", 2},
                                   {"linear_num_key_heads", 1},
                                   {"linear_num_value_heads", 2},
                                   {"linear_key_head_dim", 2},
                                   {"linear_value_head_dim", 3},
                                   {"linear_conv_kernel_dim", 4},
                                   {"num_experts", 2},
                                   {"num_experts_per_tok", 1},
                                   {"moe_intermediate_size", 3},
                                   {"shared_expert_intermediate_size", 5},
                                   {"partial_rotary_factor", 0.25},
                                   {"max_position_embeddings", nullptr}});
}

// Key dim 1x2 = 2, value dim 2x3 = 6, conv channels 2x2 + 6 = 10.
// Layer 0 (delta-net): input norm 8, in_proj_qkvz 8x(2x2 + 2x6) = 128, in_proj_ba 8x(2x2) = 32,
//   conv1d [10, 1, 4] = 40, dt_bias 2, A_log 2, norm 3, out_proj 6x8 = 48, post norm 8: 271.
// Layer 1 (full attention): input norm 8, q_proj 8x(2x4x2) = 128 (doubled for the output gate),
//   k and v 8x4 = 32 each, o 8x8 = 64, q_norm 4, k_norm 4, post norm 8: 280.
// MoE per layer: router 2x8 = 16, experts 2x(3x8x3) = 144, shared expert 3x8x5 = 120, shared
//   gate 8: 288. Loaded: embed 80 + (271 + 288) + (280 + 288) + norm 8 + lm_head 80 = 1295.
// MTP (default one layer, stored, not loaded): fc 16x8 = 128, two pre-fc norms 16, a full
//   attention MoE layer 280 + 288, norm 8 = 720. Stored: (1295 + 720) x 4 bytes = 8060.
TEST(Qwen3NextBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyQwen3Next(), 1295u, 8060u);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0,
                       {.attention = AttentionKind::kNone,
                        .mixer = LayerMixer::kGatedDeltaNet,
                        .moe = true,
                        .recurrent = true,
                        .conv_channels = 10u,
                        .conv_kernel = 4u,
                        .state_heads = 2u,
                        .elements_per_head = 6u});
  testing::ExpectLayer(m->hp, 1,
                       {.attention = AttentionKind::kFull,
                        .mixer = LayerMixer::kAttention,
                        .num_heads = 2u,
                        .num_kv_heads = 1u,
                        .head_dim_k = 4u,
                        .head_dim_v = 4u,
                        .recurrent = false});
  EXPECT_EQ(m->hp.num_mtp_layers, 1u);
  EXPECT_EQ(m->hp.shared_expert_intermediate_size, 5u);
  const Tensor* fc = FindTensor(*m, "mtp.fc.weight");
  ASSERT_NE(fc, nullptr);
  EXPECT_FALSE(fc->loaded);
  testing::ExpectShape(*m, "model.layers.0.linear_attn.conv1d.weight", {10, 1, 4});
  testing::ExpectShape(*m, "model.layers.1.self_attn.q_proj.weight", {16, 8});
  // rotary over int(4 x 0.25) = 1 dimension: inv_freq = arange(0, 1, 2) has 1 entry.
  testing::ExpectShape(*m, "model.rotary_emb.inv_freq", {1});
}

// layer_types overrides full_attention_interval; mlp_only_layers makes a dense layer.
TEST(Qwen3NextBuilder, LayerTypesAndDenseLayers) {
  auto j = TinyQwen3Next();
  j["layer_types"] = {"full_attention", "linear_attention"};
  j["mlp_only_layers"] = {1};
  j["num_nextn_predict_layers"] = 0;
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  testing::ExpectLayer(m->hp, 0, {.attention = AttentionKind::kFull});
  testing::ExpectLayer(m->hp, 1, {.moe = false, .intermediate_size = 12u, .recurrent = true});
  // Dense MLP 3x8x12 = 288 replaces the 288-parameter MoE block; no MTP.
  EXPECT_EQ(ComputeTotals(*m).parameters, 1295u);
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 1295u * 4);
}

TEST(Qwen3NextBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyQwen3Next(), {{"linear_num_value_heads", nullptr}},
                               "linear_num_value_heads");
  // not a multiple of the key heads (1 divides; use 2 keys)
  testing::ExpectPatchRejected(TinyQwen3Next(),
                               {{"linear_num_value_heads", 3}, {"linear_num_key_heads", 2}},
                               "linear_num_key_heads");
  testing::ExpectPatchRejected(TinyQwen3Next(), {{"full_attention_interval", 0}},
                               "full_attention_interval");
  testing::ExpectPatchRejected(TinyQwen3Next(), {{"layer_types", {"linear_attention"}}},
                               "layer_types");
  testing::ExpectPatchRejected(TinyQwen3Next(), {{"moe_intermediate_size", 0}},
                               "moe_intermediate_size");
  auto j = TinyQwen3Next();
  j["linear_key_head_dim"] = uint64_t{1} << 40;
  j["linear_value_head_dim"] = uint64_t{1} << 40;
  auto m = BuildJson(j);
  EXPECT_FALSE(m);
  testing::ExpectPatchRejected(TinyQwen3Next(), {{"num_hidden_layers", uint64_t{1} << 40}}, "");
}

// Qwen3-Next-80B-A3B: 79,674,391,296 loaded parameters ("80B in total" on the model card) and
// one stored MTP layer of 1,650,471,424 (the reference formula in docs/architectures.md).
TEST(Qwen3NextBuilder, Qwen3Next80BMatchesTheReferenceFormula) {
  auto m = testing::BuildEvalConfig("recent/Qwen__Qwen3-Next-80B-A3B-Thinking");
  if (!m) GTEST_SKIP() << "Qwen3-Next config absent";
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 79674391296u);
  EXPECT_EQ(t.stored_bytes, (79674391296u + 1650471424u) * 2);
  ASSERT_EQ(m->hp.layers.size(), 48u);
  uint64_t full = 0;
  for (const auto& l : m->hp.layers) full += l.attention == AttentionKind::kFull;
  EXPECT_EQ(full, 12u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
