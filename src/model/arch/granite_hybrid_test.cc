// Granite 4.0 hybrid (granitemoehybrid): a two-layer config (one Mamba-2 layer, one attention
// layer) counted by hand, the dense variant, the Mamba state and KV layer facts, hostile configs.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyGraniteHybrid() {
  auto j = testing::TinyDecoder("granitemoehybrid");
  j["architectures"] = {"GraniteMoeHybridForCausalLM"};
  j["layer_types"] = {"mamba", "attention"};
  j["intermediate_size"] = 3;
  j["num_local_experts"] = 2;
  j["num_experts_per_tok"] = 1;
  j["shared_intermediate_size"] = 4;
  j["mamba_n_heads"] = 2;
  j["mamba_n_groups"] = 1;
  j["mamba_d_state"] = 2;
  j["mamba_d_conv"] = 3;
  j["mamba_expand"] = 2;
  j["mamba_d_head"] = "auto";
  j["position_embedding_type"] = "nope";
  j["tie_word_embeddings"] = true;
  return j;
}

// Hidden 8, vocab 10, tied head: embed 80.
// Layer 0 (Mamba): d_inner = 2 x 8 = 16, head dim 16 / 2 = 8, conv_dim = 16 + 2 x 1 x 2 = 20.
//   input_layernorm 8; in_proj [16 + 20 + 2, 8] = 304; conv1d [20, 1, 3] + bias 20 = 80;
//   dt_bias, A_log, D 3 x 2 = 6; gated norm 16; out_proj [8, 16] = 128; post norm 8;
//   MoE input_linear [2, 6, 8] = 96, output_linear [2, 8, 3] = 48, router [2, 8] = 16: 160;
//   shared_mlp input_linear [8, 8] = 64, output_linear [8, 4] = 32: 96. Layer: 806.
// Layer 1 (attention, 2 heads of 4, 1 KV head): norms 16; q 64, k 32, v 32, o 64 = 192; MoE 160;
//   shared 96: 464.
// Final norm 8: 80 + 806 + 464 + 8 = 1358 parameters, 5432 bytes in float32.
TEST(GraniteHybridBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyGraniteHybrid(), 1358u, 5432u);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->assumptions.empty() ||
              m->assumptions.front().find("approximate") == std::string::npos);
  testing::ExpectShape(*m, "model.layers.0.mamba.in_proj.weight", {38, 8});
  testing::ExpectShape(*m, "model.layers.0.mamba.conv1d.weight", {20, 1, 3});
  EXPECT_NE(FindTensor(*m, "model.layers.1.self_attn.k_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.1.mamba.in_proj.weight"), nullptr);
  testing::ExpectShape(*m, "model.layers.1.block_sparse_moe.input_linear.weight", {2, 6, 8});
  EXPECT_EQ(FindTensor(*m, "model.rotary_emb.inv_freq"), nullptr);  // "nope": no rotary
  ASSERT_EQ(m->hp.layers.size(), 2u);
  // elements_per_head: head dim 8 x d_state 2
  testing::ExpectLayer(m->hp, 0,
                       {.attention = AttentionKind::kNone,
                        .mixer = LayerMixer::kMamba2,
                        .moe = true,
                        .recurrent = true,
                        .conv_channels = 20u,
                        .conv_kernel = 3u,
                        .state_heads = 2u,
                        .elements_per_head = 16u});
  testing::ExpectLayer(m->hp, 1,
                       {.attention = AttentionKind::kFull,
                        .num_kv_heads = 1u,
                        .head_dim_k = 4u,
                        .recurrent = false});
}

// num_local_experts 0 (granite-4.0-h-micro's kind): the shared MLP alone, 2 x 160 fewer; every
// layer Mamba when layer_types is absent; "rope" adds the rotary buffer (not a parameter).
TEST(GraniteHybridBuilder, DenseAllMambaAndRope) {
  auto dense = TinyGraniteHybrid();
  dense["num_local_experts"] = 0;
  auto m = testing::BuildCounted(dense, 1358u - 320u);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->hp.layers[1].moe);
  EXPECT_EQ(m->hp.layers[1].intermediate_size, 4u);
  auto all = TinyGraniteHybrid();
  all.erase("layer_types");
  auto a = BuildJson(all);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_TRUE(a->hp.layers[1].recurrent);
  // Both layers Mamba: 806 each.
  EXPECT_EQ(ComputeTotals(*a).parameters, 80u + 806u + 806u + 8u);
  auto rope = TinyGraniteHybrid();
  rope["position_embedding_type"] = "rope";
  auto r = BuildJson(rope);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NE(FindTensor(*r, "model.rotary_emb.inv_freq"), nullptr);
  EXPECT_EQ(ComputeTotals(*r).parameters, 1358u);
}

TEST(GraniteHybridBuilder, HostileConfigs) {
  testing::ExpectHostileRejected("granitemoehybrid");
  testing::ExpectPatchRejected(TinyGraniteHybrid(), {{"layer_types", {"mamba", "moe"}}},
                               "layer_types");
  testing::ExpectPatchRejected(TinyGraniteHybrid(), {{"layer_types", {"mamba"}}}, "layer_types");
  // 16 is not a multiple of 3
  testing::ExpectPatchRejected(TinyGraniteHybrid(), {{"mamba_n_heads", 3}}, "mamba_n_heads");
  testing::ExpectPatchRejected(TinyGraniteHybrid(), {{"mamba_d_state", 0}}, "mamba_d_state");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
