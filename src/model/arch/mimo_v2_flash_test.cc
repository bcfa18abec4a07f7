#include <gtest/gtest.h>

#include "memfit/build_exact.h"
#include "memfit/estimate_inference.h"
#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

// Two layers: layer 0 global attention with a dense MLP, layer 1 sliding window (4 tokens) with
// two routed experts; one MTP layer stated.
nlohmann::json TinyMiMoV2() {
  return testing::TinyDecoderWith(
      "mimo_v2_flash", {{"architectures", {"MiMoV2FlashForCausalLM"}},
                        {"head_dim", 4},
                        {"v_head_dim", 2},
                        {"swa_num_attention_heads", 2},
                        {"swa_num_key_value_heads", 2},
                        {"swa_head_dim", 4},
                        {"swa_v_head_dim", 2},
                        {"sliding_window_size", 4},
                        {"hybrid_layer_pattern", {0, 1}},
                        {"moe_layer_freq", {0, 1}},
                        {"n_routed_experts", 2},
                        {"num_experts_per_tok", 1},
                        {"moe_intermediate_size", 3},
                        {"add_swa_attention_sink_bias", true},
                        {"add_full_attention_sink_bias", false},
                        {"num_nextn_predict_layers", 1},
                        {"tie_word_embeddings", false},
                        {"max_position_embeddings", nullptr}});
}

// Layer 0 (global, dense): norms 2x8 = 16; q 8x(2x4) = 64, k 8x(1x4) = 32, v 8x(1x2) = 16,
//   o (2x2)x8 = 32; MLP 3x8x12 = 288: 448.
// Layer 1 (sliding, MoE): norms 16; q 64, k 8x(2x4) = 64, v 8x(2x2) = 32, o 32, sink bias 2;
//   router 2x8 = 16, experts 2x(3x8x3) = 144: 370 (+ e_score_correction_bias, 2 float32 buffer).
// Loaded parameters: embed 80 + 448 + 370 + norm 8 + lm_head 80 = 986.
// MTP layer (stored, not loaded): enorm 8, hnorm 8, eh_proj 16x8 = 128, input norm 8, the
//   sliding attention 194, pre_mlp_layernorm 8, dense MLP 288, final_layernorm 8: 650.
// Stored: (986 + 650) x 4 + 2 x 4 = 6552 bytes.
TEST(MiMoV2FlashBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyMiMoV2(), 986u, 6552u);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0,
                       {.attention = AttentionKind::kFull,
                        .num_kv_heads = 1u,
                        .head_dim_k = 4u,
                        .head_dim_v = 2u,
                        .moe = false});
  testing::ExpectLayer(
      m->hp, 1,
      {.attention = AttentionKind::kSliding, .num_kv_heads = 2u, .window_tokens = 4u, .moe = true});
  testing::ExpectShape(*m, "model.layers.1.self_attn.attention_sink_bias", {2});
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.attention_sink_bias"), nullptr);
  testing::ExpectShape(*m, "model.layers.1.self_attn.v_proj.weight", {4, 8});
  const Tensor* eh = FindTensor(*m, "model.mtp.layers.0.eh_proj.weight");
  ASSERT_NE(eh, nullptr);
  EXPECT_EQ(eh->shape, (std::vector<uint64_t>{8, 16}));
  EXPECT_FALSE(eh->loaded);
  EXPECT_NE(FindTensor(*m, "model.mtp.layers.0.pre_mlp_layernorm.weight"), nullptr);
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
}

// KV cache for 8 tokens, one sequence, float32: layer 0 keeps K 1x4 + V 1x2 = 6 elements (24
// bytes) per token for all 8 tokens = 192; layer 1 keeps K 2x4 + V 2x2 = 12 elements (48 bytes)
// per token for its 4-token window = 192. Total 384 bytes; the MTP layer is not counted.
TEST(MiMoV2FlashBuilder, KvCacheByHand) {
  auto m = BuildJson(TinyMiMoV2());
  ASSERT_TRUE(m) << m.error().message;
  auto kv = EstimateKvCache(*m, KvCacheOptions{.context_tokens = 8, .batch = 1,
                                               .model_dtype = Dtype::kF32});
  ASSERT_TRUE(kv) << kv.error().message;
  ASSERT_EQ(kv->layers.size(), 2u);
  EXPECT_EQ(kv->layers[0].bytes, 192u);
  EXPECT_EQ(kv->layers[1].kind, "sliding");
  EXPECT_EQ(kv->layers[1].tokens, 4u);
  EXPECT_EQ(kv->layers[1].bytes, 192u);
  EXPECT_EQ(kv->bytes, 384u);
}

// Without num_nextn_predict_layers the three MTP layers of the release are assumed, and said so.
TEST(MiMoV2FlashBuilder, UnstatedMtpLayersAreAnAssumption) {
  auto j = TinyMiMoV2();
  j.erase("num_nextn_predict_layers");
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->hp.num_mtp_layers, 3u);
  EXPECT_NE(FindTensor(*m, "model.mtp.layers.2.final_layernorm.weight"), nullptr);
  bool said = false;
  for (const auto& a : m->assumptions) said = said || a.find("3 MTP layers assumed") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, (986u + 3 * 650u) * 4 + 8);
}

TEST(MiMoV2FlashBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"hybrid_layer_pattern", nullptr}},
                               "hybrid_layer_pattern");
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"hybrid_layer_pattern", {0}}},
                               "hybrid_layer_pattern");
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"moe_layer_freq", {0, 2}}}, "moe_layer_freq");
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"n_routed_experts", 0}}, "n_routed_experts");
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"sliding_window_size", 0}}, "sliding_window_size");
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"swa_head_dim", 0}}, "head dims");
  testing::ExpectPatchRejected(TinyMiMoV2(), {{"num_hidden_layers", uint64_t{1} << 40}}, "");
}

// XiaomiMiMo/MiMo-V2-Flash (block FP8 release): built exactly; its logical parameters without the
// MTP layers round to the model card's "309B total parameters" (MiMo-V2-Flash README, "Total
// Params 309B"), and each of its three MTP layers to the card's "0.33B params/block". No weight
// index of this release was available: stored bytes are checked against the formula only.
TEST(MiMoV2FlashBuilder, RealConfigMatchesTheModelCard) {
  auto config = testing::ParseEvalConfig("recent/XiaomiMiMo__MiMo-V2-Flash");
  if (!config) GTEST_SKIP() << "recent/XiaomiMiMo__MiMo-V2-Flash/config.json is absent";
  auto m = BuildExactFromConfig(*config, BuildOptions{});
  ASSERT_TRUE(m) << m.error().message;
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  const auto t = ComputeTotals(*m);
  // By hand (H 4096, 64 heads of 192 / v 128): global attention 4096 x (12288 + 768 + 512) +
  // 8192 x 4096 = 89,128,960 (9 layers); sliding attention 4096 x (12288 + 1536 + 1024) + 8192 x
  // 4096 + 64 sinks = 94,371,904 (39 layers); 47 MoE MLPs of 256 x 3 x 4096 x 2048 + router
  // 256 x 4096 = 6,443,499,520; one dense MLP 3 x 4096 x 16384 = 201,326,592; embeddings and
  // head 2 x 152,576 x 4096 = 1,249,902,592; 97 norms of 4096 = 397,312.
  const uint64_t main = 9ull * 89128960 + 39ull * 94371904 + 47ull * 6443499520 + 201326592 +
                        1249902592 + 397312;
  EXPECT_EQ(t.parameters, main);
  EXPECT_EQ((t.parameters + 500'000'000) / 1'000'000'000, 309u);
  // MTP: enorm, hnorm, input, pre-MLP and final norms 5 x 4096, eh_proj 4096 x 8192, sliding
  // attention 94,371,904, dense MLP 201,326,592 = 329,273,408 each (card: 0.33B).
  uint64_t mtp = 0;
  for (const auto& x : m->tensors) {
    if (x.name.starts_with("model.mtp.")) mtp += LogicalParams(x);
  }
  EXPECT_EQ(mtp, 3ull * 329273408);
  ASSERT_EQ(m->hp.layers.size(), 48u);
  uint64_t sliding = 0;
  for (const auto& l : m->hp.layers) sliding += l.attention == AttentionKind::kSliding;
  EXPECT_EQ(sliding, 39u);
  // Block FP8: every expert weight float8 with a float32 [16, 32] weight_scale_inv.
  const Tensor* w = FindTensor(*m, "model.layers.1.mlp.experts.0.gate_proj.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, Dtype::kF8E4M3);
  testing::ExpectShape(*m, "model.layers.1.mlp.experts.0.gate_proj.weight_scale_inv", {16, 32});
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
