// MiniMax-M2 (minimax_m2): mixtral-style experts, whole-projection q/k norms, routing bias;
// counted by hand on a tiny config and on the real M2.5 releases (FP8 and NVIDIA's NVFP4).

#include <gtest/gtest.h>

#include "memfit/hf_config.h"
#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyMiniMaxM2() {
  return testing::TinyDecoderWith("minimax_m2",
                                  {{"architectures", {"MiniMaxM2ForCausalLM"}},
                                   {"head_dim", 4},
                                   {"intermediate_size", 3},
                                   {"num_local_experts", 2},
                                   {"num_experts_per_tok", 1},
                                   {"use_qk_norm", true},
                                   {"qk_norm_type", "per_layer"},
                                   {"use_routing_bias", true},
                                   {"use_mtp", true},
                                   {"num_mtp_modules", 1},
                                   {"max_position_embeddings", nullptr}});
}

// Per layer: norms 2 x 8 = 16; q [8, 8] 64, k [4, 8] 32, v 32, o [8, 8] 64 -> 192; q_norm over
// the whole q projection 8, k_norm 4; router [2, 8] 16; experts 2 x (w1 [3, 8] + w3 [3, 8] +
// w2 [8, 3]) = 144 -> 380, two layers 760; embed 80 + lm_head 80 + norm 8 -> 928 parameters.
// Stored: 928 x 4 + two float32 e_score_correction_bias [2] (16) = 3728; resident adds the
// non-persistent rotary inv_freq [head_dim / 2 = 2] float32 (8) = 3736.
TEST(MiniMaxM2Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyMiniMaxM2(), 928u, 3728u);
  ASSERT_TRUE(m);
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.resident_bytes, 3736u);
  testing::ExpectShape(*m, "model.layers.1.self_attn.q_norm.weight", {8});
  EXPECT_NE(FindTensor(*m, "model.layers.0.block_sparse_moe.e_score_correction_bias"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.0.block_sparse_moe.experts.1.w2.weight"), nullptr);
  EXPECT_EQ(m->hp.num_experts, 2u);
  EXPECT_TRUE(m->hp.layers[0].moe);
  bool said = false;
  for (const auto& a : m->assumptions) said = said || a.find("multi-token-prediction") != std::string::npos;
  EXPECT_TRUE(said);
  // per_head norms: head_dim wide; no routing bias when switched off; a bad norm type is named.
  auto j = TinyMiniMaxM2();
  j["qk_norm_type"] = "per_head";
  j["use_routing_bias"] = false;
  auto ph = BuildJson(j);
  ASSERT_TRUE(ph) << ph.error().message;
  testing::ExpectShape(*ph, "model.layers.0.self_attn.k_norm.weight", {4});
  EXPECT_EQ(FindTensor(*ph, "model.layers.0.block_sparse_moe.e_score_correction_bias"), nullptr);
  j["qk_norm_type"] = "per_token";
  auto bad = BuildJson(j);
  testing::ExpectErrorContains(bad, "qk_norm_type");
}

// MiniMax-M2.5 (V 200064, h 3072, 62 layers, 48 heads and 8 KV heads of 128, 256 experts of
// 1536). FP8 with 128 x 128 blocks, config.json without a dtype (float32 assumed for the rest):
// an FP8 linear [out, in] is out x in + ceil(out / 128) x ceil(in / 128) x 4. Per layer: norms
// 2 x 3072 x 4; q [6144, 3072], k and v [1024, 3072], o [3072, 6144] in FP8; q_norm 6144 and
// k_norm 1024 float32; router [256, 3072] x 4 ("gate" not converted); e_score_correction_bias
// 256 x 4; 256 experts of w1, w3 [1536, 3072] and w2 [3072, 1536] in FP8. Embed and lm_head
// 200064 x 3072 x 4, norm 3072 x 4: 232,581,673,984 bytes. NVIDIA's NVFP4 (bf16 rest, attention
// and router ignored): experts out x in x 9 / 16 + 8 each: 134,401,757,184 bytes.
TEST(MiniMaxM2Builder, RealReleasesByHand) {
  auto fp8 = testing::BuildEvalConfig("recent/MiniMaxAI__MiniMax-M2.5");
  if (!fp8) GTEST_SKIP() << "../shared/eval/recent/MiniMaxAI__MiniMax-M2.5 not available";
  EXPECT_EQ(ComputeTotals(*fp8).stored_bytes, 232581673984u);
  EXPECT_EQ(FindTensor(*fp8, "model.layers.7.block_sparse_moe.experts.9.w2.weight")->dtype,
            Dtype::kF8E4M3);
  EXPECT_EQ(FindTensor(*fp8, "model.layers.7.block_sparse_moe.gate.weight")->dtype, Dtype::kF32);
  for (const auto& a : fp8->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  auto fp4 = testing::BuildEvalConfig("recent/nvidia__MiniMax-M2.5-NVFP4");
  if (!fp4) GTEST_SKIP() << "nvidia__MiniMax-M2.5-NVFP4 not available";
  EXPECT_EQ(ComputeTotals(*fp4).stored_bytes, 134401757184u);
  EXPECT_EQ(FindTensor(*fp4, "model.layers.7.self_attn.q_proj.weight")->dtype, Dtype::kBF16);
  EXPECT_EQ(FindTensor(*fp4, "model.layers.7.block_sparse_moe.experts.9.w1.weight")->dtype,
            Dtype::kU8);
  // Logical parameters (issue 15): both releases count the same model, scales excluded.
  EXPECT_EQ(ComputeTotals(*fp4).parameters, ComputeTotals(*fp8).parameters);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
