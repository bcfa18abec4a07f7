// MiniMax-M3 (minimax_m3.cc): text and vision-language configs.

#include <gtest/gtest.h>

#include "formats/hf_config_json.h"
#include "memfit/estimate_inference.h"
#include "memfit/estimate_load.h"
#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

// Two layers, hidden 8, float32: layer 0 dense with full attention, layer 1 MoE with sparse
// attention (one index head of 4); one MTP module.
nlohmann::json TinyMiniMaxM3() {
  return testing::TinyDecoderWith("minimax_m3",
                                  {{"architectures", {"MiniMaxM3ForCausalLM"}},
                                   {"tie_word_embeddings", false},
                                   {"head_dim", 4},
                                   {"intermediate_size", 3},
                                   {"dense_intermediate_size", 12},
                                   {"shared_intermediate_size", 3},
                                   {"n_shared_experts", 1},
                                   {"num_local_experts", 2},
                                   {"num_experts_per_tok", 1},
                                   {"moe_layer_freq", {0, 1}},
                                   {"qk_norm_type", "per_head"},
                                   {"use_qk_norm", true},
                                   {"use_routing_bias", true},
                                   {"num_mtp_modules", 1},
                                   {"sparse_attention_config",
                                    {{"use_sparse_attention", true},
                                     {"sparse_attention_freq", {0, 1}},
                                     {"sparse_disable_index_value", {0, 1}},
                                     {"sparse_num_index_heads", 1},
                                     {"sparse_index_dim", 4}}},
                                   {"max_position_embeddings", nullptr}});
}

// embed 80. Attention: q 8 x 8 = 64, k 8 x 4 = 32, v 32, o 64, per-head q/k norms 4 + 4: 200.
// Layer 0: input norm 8 + 200 + post norm 8 + dense mlp 3 x 8 x 12 = 288: 504. Layer 1: 8 + 200
// + index_q_proj 8 x 4 = 32 + index_k_proj 32 + index norms 8 + 8 + gate 2 x 8 = 16 (float32) +
// e_score_correction_bias 2 + experts 2 x 3 x 24 = 144 + shared experts 3 x 24 = 72: 522. Norm 8,
// lm_head 80: 1194 loaded parameters. MTP module (stored, not loaded): enorm 8, hnorm 8, eh_proj
// 16 x 8 = 128, a sparse MoE layer 522, final_layernorm 8: 674. (1194 + 674) x 4 = 7472 bytes.
TEST(MiniMaxM3Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyMiniMaxM3(), 1194u, 7472u);
  ASSERT_TRUE(m);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.self_attn.index_q_proj.weight"), nullptr);
  testing::ExpectShape(*m, "model.layers.1.self_attn.index_q_proj.weight", {4, 8});
  EXPECT_EQ(FindTensor(*m, "model.layers.1.block_sparse_moe.gate.weight")->dtype, Dtype::kF32);
  const Tensor* mtp = FindTensor(*m, "model.mtp.layers.0.eh_proj.weight");
  ASSERT_NE(mtp, nullptr);
  EXPECT_FALSE(mtp->loaded);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.layers[1].indexer_head_dim, 4u);
  EXPECT_EQ(m->hp.layers[0].indexer_head_dim, 0u);
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
}

// ModelOpt MIXED_PRECISION as nvidia/MiniMax-M3-NVFP4 uses it: NVFP4 experts, MXFP8 attention.
// experts.0.w2 [8, 3] in NVFP4: weight [8, 2] uint8 = 16 + weight_scale [8, 1] E4M3 = 8 + two
// float32 scalars 8 = 32 bytes instead of 96. q_proj [8, 8] in MXFP8: weight 64 float8 bytes +
// weight_scale [8, 1] E8M0 = 8: 72 instead of 256. 7472 - 64 - 184 = 7224 bytes.
TEST(MiniMaxM3Builder, Nvfp4AndMxfp8ByHand) {
  auto j = TinyMiniMaxM3();
  j["quantization_config"] = {
      {"quant_method", "modelopt"},
      {"quant_algo", "MIXED_PRECISION"},
      {"quantized_layers",
       {{"model.layers.1.block_sparse_moe.experts.0.w2",
         {{"quant_algo", "NVFP4"}, {"group_size", 16}}},
        {"model.layers.1.self_attn.q_proj", {{"quant_algo", "MXFP8"}}}}}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 7224u);
  EXPECT_EQ(ComputeTotals(*m).parameters, 1194u);
  const Tensor* scale = FindTensor(*m, "model.layers.1.self_attn.q_proj.weight_scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->dtype, Dtype::kF8E8M0);
  EXPECT_EQ(scale->shape, (std::vector<uint64_t>{8, 1}));
}

TEST(MiniMaxM3Builder, HostileConfigs) {
  testing::ExpectPatchRejected(TinyMiniMaxM3(), {{"moe_layer_freq", {0}}}, "moe_layer_freq");
  testing::ExpectPatchRejected(TinyMiniMaxM3(),
                               {{"sparse_attention_config", {{"sparse_index_dim", 0}}}},
                               "sparse_index_dim");
  testing::ExpectPatchRejected(
      TinyMiniMaxM3(), {{"sparse_attention_config", {{"sparse_disable_index_value", {0, 0}}}}},
      "sparse_disable_index_value");
  testing::ExpectPatchRejected(TinyMiniMaxM3(), {{"attention_output_gate", true}},
                               "attention_output_gate");
  testing::ExpectPatchRejected(TinyMiniMaxM3(), {{"num_mtp_modules", 100000}}, "num_mtp_modules");
  testing::ExpectPatchRejected(TinyMiniMaxM3(), {{"num_local_experts", nullptr}},
                               "num_local_experts");
}

// MiniMaxAI/MiniMax-M3 (text config; the card: ~428B total with the vision tower, ~23B active).
// Loaded parameters 426,174,572,928 (the sum below; ~428B with the vision tower's 0.87B counted
// in MiniMaxM3VlNvfp4 below: 427.04B, 0.2% under the card's rounded figure). KV cache at 32,768 tokens in bf16: 60 layers
// x 32768 x 4 x (128 + 128) x 2 bytes = 4,026,531,840 plus the index keys of the 57 sparse layers,
// 57 x 32768 x 128 x 2 = 478,150,656: 4,504,682,496 bytes.
TEST(MiniMaxM3Builder, RealMiniMaxM3) {
  auto m = testing::BuildEvalConfig("recent/MiniMaxAI__MiniMax-M3");
  if (!m) GTEST_SKIP() << "../shared/eval/recent/MiniMaxAI__MiniMax-M3 is absent";
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  // embed + lm_head 2 x 200064 x 6144 = 2,458,386,432; attention 60 x (2 x 6144 x 8192 +
  // 2 x 6144 x 512 + 256) = 6,417,300,480; indexer 57 x (6144 x 512 + 6144 x 128 + 256) =
  // 224,147,712; dense MLPs 3 x 3 x 6144 x 12288 = 679,477,248; 57 MoE layers of 128 x 3 x 6144
  // x 3072 experts + 3 x 6144 x 3072 shared + 128 x 6144 + 128 router = 416,394,517,632; norms
  // 121 x 6144 = 743,424.
  EXPECT_EQ(ComputeTotals(*m).parameters, 2458386432u + 6417300480u + 224147712u + 679477248u +
                                              416394517632u + 743424u);
  auto kv = EstimateKvCache(*m, KvCacheOptions{.context_tokens = 32768});
  ASSERT_TRUE(kv) << kv.error().message;
  EXPECT_EQ(kv->bytes, 4504682496u);
}

// nvidia/MiniMax-M3-NVFP4 (minimax_m3_vl): the same text model under language_model.model plus
// the vision tower: patch_embedding 1280 x 3 x 2 x 14 x 14 = 1,505,280, pre_layrnorm 2,560, 32
// encoder layers of 2 layer norms 5,120, q/k/v/out 4 x (1280^2 + 1280) = 6,558,720, fc1
// 1280 x 5120 + 5120 = 6,558,720, fc2 5120 x 1280 + 1280 = 6,554,880 (19,677,440 each);
// multi_modal_projector 1280 x 6144 + 6144 + 6144^2 + 6144 = 45,625,344; patch_merge_mlp
// 24576 x 6144 + 6144 + 6144^2 + 6144 = 188,755,968. Tower 865,567,232; loaded 427,040,140,160
// (card: ~428B). Experts in NVFP4, attention, shared experts and dense MLPs in MXFP8.
TEST(MiniMaxM3Builder, RealMiniMaxM3VlNvfp4) {
  auto m = testing::BuildEvalConfig("recent/nvidia__MiniMax-M3-NVFP4");
  if (!m) GTEST_SKIP() << "../shared/eval/recent/nvidia__MiniMax-M3-NVFP4 is absent";
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  EXPECT_EQ(ComputeTotals(*m).parameters, 427040140160u);
  const Tensor* w1 =
      FindTensor(*m, "language_model.model.layers.3.block_sparse_moe.experts.0.w1.weight");
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w1->dtype, Dtype::kU8);
  const Tensor* q = FindTensor(*m, "language_model.model.layers.3.self_attn.q_proj.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dtype, Dtype::kF8E4M3);
  EXPECT_NE(FindTensor(*m, "vision_tower.vision_model.encoder.layers.31.mlp.fc2.bias"), nullptr);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
