// Hunyuan MoE V1 (hunyuan_v1_moe, and Tencent's "hunyuan" configs of HunYuanMoEV1ForCausalLM): a
// two-layer config counted by hand (per-head q/k norms, float32 router, experts and the shared
// MLP on every layer), per-layer lists, cross-layer attention, hostile configs, and
// Hunyuan-A13B at full size from its published config.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyHunyuanMoe() {
  auto j = testing::TinyDecoder("hunyuan_v1_moe");  // vocab 10, hidden 8, 2 heads of 4, 1 KV, I 12
  j["architectures"] = {"HunYuanMoEV1ForCausalLM"};
  j["num_experts"] = 2;
  j["moe_topk"] = 1;
  return j;  // tie_word_embeddings absent: HunYuanMoEV1Config's default false
}

// Hidden 8, vocab 10, untied head: embed 80 + lm_head 80.
// Per layer: norms 16; q [8, 8] 64, k [4, 8] 32, v 32, o [8, 8] 64 = 192; query_layernorm and
// key_layernorm [4] 8; router mlp.gate.wg [2, 8] 16 (float32); 2 experts of intermediate_size 12:
// 2 x 3 x (12 x 8) = 576; shared_mlp 288: 16 + 192 + 8 + 16 + 576 + 288 = 1096.
// model.norm 8: 80 + 80 + 2 x 1096 + 8 = 2360.
TEST(HunYuanMoeBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyHunyuanMoe(), 2360u);
  ASSERT_TRUE(m);
  const Tensor* wg = FindTensor(*m, "model.layers.1.mlp.gate.wg.weight");
  ASSERT_NE(wg, nullptr);
  EXPECT_EQ(wg->dtype, Dtype::kF32);
  EXPECT_EQ(wg->shape, (std::vector<uint64_t>{2, 8}));
  testing::ExpectShape(*m, "model.layers.0.self_attn.query_layernorm.weight", {4});
  testing::ExpectShape(*m, "model.layers.0.mlp.shared_mlp.down_proj.weight", {8, 12});
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.experts.1.up_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "lm_head.weight"), nullptr);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_TRUE(m->hp.layers[0].moe);
  EXPECT_EQ(m->hp.layers[0].num_kv_heads, 1u);
  EXPECT_EQ(m->hp.num_experts, 2u);
  EXPECT_EQ(m->hp.experts_per_token, 1u);
  bool said_tie = false;
  for (const auto& a : m->assumptions) {
    said_tie |= a.find("\"tie_word_embeddings\" absent") != std::string::npos;
  }
  EXPECT_TRUE(said_tie);
  // Tencent's remote-code config names the same class under model_type "hunyuan".
  auto remote = TinyHunyuanMoe();
  remote["model_type"] = "hunyuan";
  auto r = testing::BuildCounted(remote, 2360u);
  ASSERT_TRUE(r);
}

// Per-layer lists: layer 1 with 3 experts of width 6 and 2 shared experts (shared MLP 12 x 2 =
// 24 wide): norms 16, attention 192, q/k norms 8, router [3, 8] 24, experts 3 x 3 x (6 x 8) =
// 432, shared 3 x (24 x 8) = 576: 1248. 80 + 80 + 1096 + 1248 + 8 = 2512, with an assumption
// saying that transformers would size these with intermediate_size.
// Cross-layer attention (use_cla, factor 2): layer 1 has no k/v projections (-64) and reuses
// layer 0's KV cache: 2296.
TEST(HunYuanMoeBuilder, PerLayerListsAndCrossLayerAttention) {
  auto j = TinyHunyuanMoe();
  j["num_experts"] = {2, 3};
  j["moe_topk"] = {1, 2};
  j["moe_intermediate_size"] = {12, 6};
  j["num_shared_expert"] = {1, 2};
  auto m = testing::BuildCounted(j, 2512u);
  ASSERT_TRUE(m);
  bool said = false;
  for (const auto& a : m->assumptions) said |= a.find("moe_intermediate_size") != std::string::npos;
  EXPECT_TRUE(said);
  auto cla = TinyHunyuanMoe();
  cla["use_cla"] = true;
  cla["cla_share_factor"] = 2;
  auto c = testing::BuildCounted(cla, 2296u);
  ASSERT_TRUE(c);
  EXPECT_EQ(FindTensor(*c, "model.layers.1.self_attn.k_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*c, "model.layers.0.self_attn.k_proj.weight"), nullptr);
  EXPECT_FALSE(c->hp.layers[0].kv_shared);
  EXPECT_TRUE(c->hp.layers[1].kv_shared);
}

TEST(HunYuanMoeBuilder, HostileConfigs) {
  testing::ExpectHostileRejected("hunyuan_v1_moe");
  // one entry for two layers
  testing::ExpectPatchRejected(TinyHunyuanMoe(), {{"num_experts", {2}}}, "num_experts");
  testing::ExpectPatchRejected(TinyHunyuanMoe(), {{"moe_topk", "8"}}, "moe_topk");
  testing::ExpectPatchRejected(TinyHunyuanMoe(), {{"moe_intermediate_size", {12, -1}}},
                               "moe_intermediate_size");
  testing::ExpectPatchRejected(TinyHunyuanMoe(), {{"num_shared_expert", 0}}, "num_shared_expert");
  testing::ExpectPatchRejected(TinyHunyuanMoe(), {{"use_cla", true}, {"cla_share_factor", 0}},
                               "cla_share_factor");
}

// Hunyuan-A13B: the config.json of Tencent's release as kept in the GitHub repository
// Tencent-Hunyuan/Hunyuan-A13B (mirror tianyu1412/Hunyuan-A13B, models/config.json at
// df832ebc; model_type "hunyuan", class HunYuanMoEV1ForCausalLM), the keys that shape tensors.
// By hand: embed 128167 x 4096 = 524,972,032 (tied); per layer attention 2 x 4096^2 +
// 2 x 4096 x 1024 = 41,943,040, q/k norms 256, norms 8192, router 64 x 4096 = 262,144, 64 experts
// x 3 x 4096 x 3072 = 2,415,919,104, shared MLP 37,748,736: 2,495,881,472 per layer; final norm
// 4096: 524,972,032 + 32 x 2,495,881,472 + 4096 = 80,393,183,232.
// The card says "80 billion total parameters" (rounded: 80.39B). No safetensors index of the
// Hub release was found in the public mirrors searched, so stored bytes are not checked.
TEST(HunYuanMoeBuilder, HunyuanA13BCountsItsParameters) {
  const nlohmann::json j = {
      {"architectures", {"HunYuanMoEV1ForCausalLM"}}, {"model_type", "hunyuan"},
      {"attention_bias", false}, {"attention_head_dim", 128}, {"cla_share_factor", 2},
      {"hidden_act", "silu"}, {"hidden_size", 4096}, {"intermediate_size", 3072},
      {"max_position_embeddings", 32768}, {"mlp_bias", false},
      {"moe_intermediate_size", std::vector<int>(32, 3072)}, {"moe_topk", std::vector<int>(32, 8)},
      {"num_attention_heads", 32}, {"num_experts", 64}, {"num_hidden_layers", 32},
      {"num_key_value_heads", 8}, {"num_shared_expert", std::vector<int>(32, 1)},
      {"rms_norm_eps", 1e-5}, {"tie_word_embeddings", true}, {"torch_dtype", "bfloat16"},
      {"use_cla", false}, {"use_mixed_mlp_moe", true}, {"use_qk_norm", true},
      {"vocab_size", 128167}};
  auto m = testing::BuildCounted(j, 80'393'183'232u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.experts_per_token, 8u);
  EXPECT_EQ(m->hp.head_dim, 128u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
