// Bamba (bamba): a two-layer config (one Mamba-2 layer, one attention layer by
// attn_layer_indices) counted by hand, the partial rotary buffer, the Mamba state and KV layer
// facts, the defaults (untied head, all-Mamba without attn_layer_indices), hostile configs.

#include <algorithm>

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyBamba() {
  auto j = testing::TinyDecoder("bamba");  // vocab 10, hidden 8, 2 heads of 4, 1 KV head, I 12
  j["architectures"] = {"BambaForCausalLM"};
  j["attn_layer_indices"] = nlohmann::json::array({1});
  j["mamba_n_heads"] = 2;
  j["mamba_n_groups"] = 1;
  j["mamba_d_state"] = 2;
  j["mamba_d_conv"] = 3;
  j["mamba_expand"] = 2;
  j["mamba_d_head"] = "auto";
  return j;
}

// Hidden 8, vocab 10, untied head (BambaConfig's default): embed 80 + lm_head 80.
// Layer 0 (Mamba): d_inner = 2 x 8 = 16, head dim 16 / 2 = 8, conv_dim = 16 + 2 x 1 x 2 = 20.
//   input_layernorm 8; in_proj [16 + 20 + 2, 8] = 304; conv1d [20, 1, 3] + bias 20 = 80;
//   dt_bias, A_log, D 3 x 2 = 6; gated norm 16; out_proj [8, 16] = 128; pre_ff_layernorm 8;
//   feed_forward gate and up [12, 8] = 96 each, down [8, 12] = 96: 288. Layer: 838.
// Layer 1 (attention, 2 heads of 4, 1 KV head): norms 16; q 32 x 2 = 64, k 32, v 32, o 64 = 192;
//   feed_forward 288: 496.
// final_layernorm 8: 80 + 838 + 496 + 8 + 80 = 1502 parameters, 6008 bytes in float32.
// Rotary: head dim 4 x partial_rotary_factor 0.5 = 2 dims, inv_freq [1] (a buffer).
TEST(BambaBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyBamba(), 1502u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.layers.0.mamba.in_proj.weight", {38, 8});
  testing::ExpectShape(*m, "model.layers.0.mamba.conv1d.weight", {20, 1, 3});
  EXPECT_NE(FindTensor(*m, "model.layers.0.mamba.conv1d.bias"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mamba.in_proj.bias"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.1.self_attn.k_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.1.self_attn.k_proj.bias"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.1.mamba.in_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.1.pre_ff_layernorm.weight"), nullptr);
  testing::ExpectShape(*m, "model.layers.0.feed_forward.down_proj.weight", {8, 12});
  EXPECT_NE(FindTensor(*m, "model.final_layernorm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "lm_head.weight"), nullptr);
  testing::ExpectShape(*m, "model.rotary_emb.inv_freq", {1});
  ASSERT_EQ(m->hp.layers.size(), 2u);
  // elements_per_head: head dim 8 x d_state 2
  testing::ExpectLayer(m->hp, 0,
                       {.attention = AttentionKind::kNone,
                        .mixer = LayerMixer::kMamba2,
                        .intermediate_size = 12u,
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
  EXPECT_EQ(m->hp.ssm_inner_size, 16u);
  EXPECT_EQ(m->hp.ssm_state_size, 2u);
}

// Tied head: 80 fewer. No attn_layer_indices: both layers Mamba (838 each). A full rotary factor
// doubles inv_freq.
// The SSD chunk of the torch-path scan: BambaConfig "mamba_chunk_size", default 256 (said).
TEST(BambaBuilder, MambaChunkSize) {
  auto m = BuildJson(TinyBamba());
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.ssm_chunk_size, 256u);
  EXPECT_TRUE(std::any_of(m->assumptions.begin(), m->assumptions.end(), [](const auto& a) {
    return a.find("no \"mamba_chunk_size\": the config class's default 256") != std::string::npos;
  }));
  auto set = TinyBamba();
  set["mamba_chunk_size"] = 64;
  auto s = BuildJson(set);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->hp.ssm_chunk_size, 64u);
  EXPECT_TRUE(std::none_of(s->assumptions.begin(), s->assumptions.end(), [](const auto& a) {
    return a.find("mamba_chunk_size") != std::string::npos;
  }));
  testing::ExpectPatchRejected(TinyBamba(), {{"mamba_chunk_size", 0}}, "mamba_chunk_size");
}

TEST(BambaBuilder, TiedAllMambaAndRotaryFactor) {
  auto tied = TinyBamba();
  tied["tie_word_embeddings"] = true;
  auto m = testing::BuildCounted(tied, 1502u - 80u);
  ASSERT_TRUE(m);
  auto all = TinyBamba();
  all.erase("attn_layer_indices");
  auto a = BuildJson(all);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_TRUE(a->hp.layers[1].recurrent);
  EXPECT_EQ(ComputeTotals(*a).parameters, 80u + 838u + 838u + 8u + 80u);
  auto full = TinyBamba();
  full["partial_rotary_factor"] = 1.0;
  auto f = BuildJson(full);
  ASSERT_TRUE(f) << f.error().message;
  testing::ExpectShape(*f, "model.rotary_emb.inv_freq", {2});
}

TEST(BambaBuilder, HostileConfigs) {
  testing::ExpectHostileRejected("bamba");
  testing::ExpectPatchRejected(TinyBamba(), {{"attn_layer_indices", nlohmann::json::array({2})}},
                               "attn_layer_indices");
  testing::ExpectPatchRejected(TinyBamba(), {{"attn_layer_indices", nlohmann::json::array({-1})}},
                               "attn_layer_indices");
  testing::ExpectPatchRejected(TinyBamba(), {{"attn_layer_indices", "1"}}, "attn_layer_indices");
  // 16 is not a multiple of 3
  testing::ExpectPatchRejected(TinyBamba(), {{"mamba_n_heads", 3}}, "mamba_n_heads");
  testing::ExpectPatchRejected(TinyBamba(), {{"mamba_d_conv", 0}}, "mamba_d_conv");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
