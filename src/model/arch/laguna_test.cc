// Laguna (laguna; issue 30): per-layer query heads, softplus g_proj gate, sliding layer_types,
// dense/sparse mlp_layer_types with a sigmoid router, correction bias and one shared expert,
// counted by hand on a two-layer config.

#include <gtest/gtest.h>

#include "memfit/hf_config.h"
#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

// Layer 0: full attention, 4 heads, dense MLP; layer 1: sliding (window 4), 2 heads, sparse.
// hidden 8, 1 KV head of 4, 2 experts of 3, shared expert 2, dense MLP 6, float32.
nlohmann::json TinyLaguna() {
  return testing::TinyDecoderWith(
      "laguna", {{"architectures", {"LagunaForCausalLM"}},
                 {"num_attention_heads", 4},
                 {"num_attention_heads_per_layer", {4, 2}},
                 {"head_dim", 4},
                 {"intermediate_size", 6},
                 {"num_experts", 2},
                 {"num_experts_per_tok", 1},
                 {"moe_intermediate_size", 3},
                 {"shared_expert_intermediate_size", 2},
                 {"sliding_window", 4},
                 {"layer_types", {"full_attention", "sliding_attention"}},
                 {"mlp_layer_types", {"dense", "sparse"}},
                 {"gating", true},
                 {"max_position_embeddings", 64}});
}

// Layer 0: input norm 8, q [16, 8] 128, k [4, 8] 32, v 32, o [8, 16] 128, q_norm and k_norm
// [4] 8, g_proj [4, 8] 32 -> 368; dense gate/up [6, 8] 48 each, down [8, 6] 48 -> 144;
// post-attention norm 8 -> 520. Layer 1: input norm 8, q [8, 8] 64, k 32, v 32, o [8, 8] 64,
// norms 8, g_proj [2, 8] 16 -> 224; router [2, 8] 16, correction bias [2] 2, experts 2 x
// (gate/up [3, 8] 24 each + down [8, 3] 24) = 144, shared expert gate/up [2, 8] 16 each + down
// [8, 2] 16 = 48 -> 210; post-attention norm 8 -> 442. Embed 80, lm_head 80, norm 8 -> 168.
// 520 + 442 + 168 = 1,130 parameters, 4,520 bytes. Rotary (no "rope_parameters": full 0.5,
// sliding 1.0): full_attention_{inv_freq,original_inv_freq} [int(4 x 0.5) / 2 = 1] and
// sliding_attention_* [2] float32 -> 6 x 4 = 24 bytes resident.
TEST(LagunaBuilder, TwoLayersByHand) {
  auto m = testing::BuildCounted(TinyLaguna(), 1130u, 4520u);
  ASSERT_TRUE(m);
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.resident_bytes, 4520u + 24);
  testing::ExpectShape(*m, "model.layers.1.self_attn.q_proj.weight", {8, 8});
  testing::ExpectShape(*m, "model.layers.0.self_attn.g_proj.weight", {4, 8});
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.experts.e_score_correction_bias"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.shared_expert.down_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.gate.weight"), nullptr);
  const auto& layers = m->hp.layers;
  ASSERT_EQ(layers.size(), 2u);
  testing::ExpectLayer(
      m->hp, 0,
      {.attention = AttentionKind::kFull, .num_heads = 4u, .moe = false, .intermediate_size = 6u});
  testing::ExpectLayer(
      m->hp, 1,
      {.attention = AttentionKind::kSliding, .num_heads = 2u, .window_tokens = 4u, .moe = true});
}

// "gating": "per-element" (vLLM): g_proj [heads x head_dim, 8]: layer 0 [16, 8] 128 (+96),
// layer 1 [8, 8] 64 (+48) -> 1,274. "swa_attention_sink_enabled": sink [2] on the sliding layer
// only -> 1,132. Without "mlp_layer_types" LagunaConfig makes layer 0 dense and the rest
// sparse: the same 1,130.
TEST(LagunaBuilder, GatingSinksAndDefaults) {
  auto j = TinyLaguna();
  j["gating"] = "per-element";
  auto e = testing::BuildCounted(j, 1274u);
  ASSERT_TRUE(e);
  j = TinyLaguna();
  j["swa_attention_sink_enabled"] = true;
  auto s = testing::BuildCounted(j, 1132u);
  ASSERT_TRUE(s);
  EXPECT_EQ(FindTensor(*s, "model.layers.0.self_attn.sink"), nullptr);
  j = TinyLaguna();
  j.erase("mlp_layer_types");
  auto d = testing::BuildCounted(j, 1130u);
  ASSERT_TRUE(d);
  // A nested rope_parameters sets each type's width: full 1.0 -> [2] each (+8 bytes).
  j["rope_parameters"] = {{"full_attention", {{"rope_type", "default"},
                                              {"partial_rotary_factor", 1.0}}},
                          {"sliding_attention", {{"rope_type", "default"}}}};
  auto r = BuildJson(j);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(ComputeTotals(*r).resident_bytes, 4520u + 32);
}

TEST(LagunaBuilder, BadListsAreNamed) {
  testing::ExpectPatchRejected(TinyLaguna(), {{"num_attention_heads_per_layer", {4, 0}}},
                               "num_attention_heads_per_layer");
  testing::ExpectPatchRejected(TinyLaguna(), {{"num_attention_heads_per_layer", {4}}},
                               "num_attention_heads_per_layer");
  testing::ExpectPatchRejected(TinyLaguna(), {{"mlp_layer_types", {"dense", "moe"}}},
                               "mlp_layer_types");
  testing::ExpectPatchRejected(TinyLaguna(), {{"gating", "sometimes"}}, "gating");
  auto j = TinyLaguna();
  j["rope_parameters"] = {{"full_attention", {{"partial_rotary_factor", 0.5}}}};
  testing::ExpectError(j, "rope_parameters");
  testing::ExpectHostileRejected("laguna");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
