#include <sstream>

#include <gtest/gtest.h>

#include "formats/hf_config_json.h"
#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyDeepseekV3() {
  return testing::TinyMlaMoe("deepseek_v3",
                             {{"num_nextn_predict_layers", 1}, {"num_key_value_heads", nullptr}});
}

// Attention per layer: input norm 8, q_a 8x4 = 32, q_a norm 4, q_b 4x(2x4) = 32, kv_a
// 8x(4+2) = 48, kv_a norm 4, kv_b 4x(2x(2+2)) = 32, o 4x8 = 32, post norm 8: 200.
// Layer 0 dense: + 3x8x12 = 288 -> 488. Layer 1 MoE: gate 2x8 = 16, experts 2x(3x8x3) = 144,
// shared (3x1) 3x8x3 = 72 -> 432. Loaded: 488 + 432 + embed 80 + norm 8 + lm_head 80 = 1088.
// MTP layer 2 (stored, not loaded): embed 80, enorm 8, hnorm 8, eh_proj 16x8 = 128, MoE layer
// 432, shared_head norm 8 + head 80 = 744. Stored bytes: (1088 + 744) x 4 + two float32
// e_score_correction_bias [2] buffers (layers 1 and 2) = 7328 + 16 = 7344.
TEST(DeepseekBuilder, V3TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyDeepseekV3(), 1088u, 7344u);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0, {.moe = false});
  testing::ExpectLayer(m->hp, 1, {.attention = AttentionKind::kMla, .moe = true});
  EXPECT_EQ(m->hp.kv_lora_rank, 4u);
  EXPECT_EQ(m->hp.qk_rope_head_dim, 2u);
  const Tensor* eh = FindTensor(*m, "model.layers.2.eh_proj.weight");
  ASSERT_NE(eh, nullptr);
  EXPECT_FALSE(eh->loaded);
}

// fp8 with 128x128 blocks: kv_a_proj_with_mqa [6, 8] -> float8 weight 48 bytes plus a float32
// weight_scale_inv [1, 1]; the router (mlp.gate) stays in the checkpoint dtype.
TEST(DeepseekBuilder, Fp8BlockScales) {
  auto j = TinyDeepseekV3();
  j["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  const Tensor* w = FindTensor(*m, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, Dtype::kF8E4M3);
  testing::ExpectShape(*m, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight_scale_inv", {1, 1});
  EXPECT_EQ(FindTensor(*m, "model.layers.1.mlp.gate.weight")->dtype, Dtype::kF32);
  j["quantization_config"] = {{"quant_method", "fp8"}};
  testing::ExpectError(j, "weight_block_size");
}

// DeepSeek-V2-Lite style: no q_lora_rank (q_proj [2x4, 8] = 64 instead of 32 + 4 + 32 = 68).
TEST(DeepseekBuilder, V2WithoutQLora) {
  auto j = TinyDeepseekV3();
  j["model_type"] = "deepseek_v2";
  j["q_lora_rank"] = nullptr;
  j.erase("num_nextn_predict_layers");
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  // 1088 - 2 x 4 (68 -> 64 per layer), no e_score_correction_bias in V2.
  EXPECT_EQ(ComputeTotals(*m).parameters, 1080u);
  EXPECT_NE(FindTensor(*m, "model.layers.0.self_attn.q_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.1.mlp.gate.e_score_correction_bias"), nullptr);
}

TEST(DeepseekBuilder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyDeepseekV3(), {{"kv_lora_rank", nullptr}}, "kv_lora_rank");
  testing::ExpectPatchRejected(TinyDeepseekV3(), {{"num_attention_heads", 0}},
                               "num_attention_heads");
  testing::ExpectPatchRejected(TinyDeepseekV3(), {{"moe_layer_freq", 0}}, "moe_layer_freq");
  testing::ExpectPatchRejected(TinyDeepseekV3(), {{"hidden_size", uint64_t{1} << 45}},
                               "hidden_size");
}

// DeepSeek-V3.2: each attention (the MTP layer's too) adds a lightning indexer: wq_b
// 4 x (2 x 4) = 32, wk 8 x 4 = 32, k_norm LayerNorm 4 + 4 = 8, weights_proj 8 x 2 = 16: 88.
// Loaded 1088 + 2 x 88 = 1264; MTP 744 + 88 = 832; stored (1264 + 832) x 4 + 16 = 8400.
TEST(DeepseekBuilder, V32IndexerCountsByHand) {
  auto j = TinyDeepseekV3();
  j["model_type"] = "deepseek_v32";
  j["index_n_heads"] = 2;
  j["index_head_dim"] = 4;
  j["index_topk"] = 8;
  auto m = testing::BuildCounted(j, 1264u, 8400u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.layers[0].indexer_head_dim, 4u);
  EXPECT_EQ(m->hp.layers[1].indexer_head_dim, 4u);
  EXPECT_EQ(m->hp.index_topk, 8u);
  EXPECT_EQ(m->hp.q_lora_rank, 4u);
  EXPECT_EQ(m->hp.num_mtp_layers, 1u);
  testing::ExpectShape(*m, "model.layers.1.self_attn.indexer.wq_b.weight", {8, 4});
  EXPECT_NE(FindTensor(*m, "model.layers.0.self_attn.indexer.k_norm.bias"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.2.self_attn.indexer.wk.weight"), nullptr);
}

// GLM-5 (glm_moe_dsa): layer 1 is "shared" (no indexer: 1088 + 88 = 1176 loaded); its MTP layer
// has an indexer but no embed_tokens or shared_head.head (744 - 80 - 80 + 88 = 672):
// stored (1176 + 672) x 4 + 16 = 7408.
TEST(DeepseekBuilder, GlmMoeDsaSharedIndexerAndMtp) {
  auto j = TinyDeepseekV3();
  j["model_type"] = "glm_moe_dsa";
  j["index_n_heads"] = 2;
  j["index_head_dim"] = 4;
  j["indexer_types"] = {"full", "shared"};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  auto t = ComputeTotals(*m);
  EXPECT_EQ(t.parameters, 1176u);
  EXPECT_EQ(t.stored_bytes, 7408u);
  EXPECT_EQ(m->hp.layers[0].indexer_head_dim, 4u);
  EXPECT_EQ(m->hp.layers[1].indexer_head_dim, 0u);
  EXPECT_EQ(FindTensor(*m, "model.layers.2.embed_tokens.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.2.shared_head.norm.weight"), nullptr);
  j.erase("indexer_types");
  j["index_topk_freq"] = 2;  // max(i - 1 + 1, 0) % 2 == 0: layer 0 full, 1 shared; MTP full
  j["index_skip_topk_offset"] = 1;
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1176u);
  j["mlp_layer_types"] = {"dense", "dense"};  // GLM-5.2: overrides first_k_dense_replace
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_FALSE(m->hp.layers[1].moe);
}

// kimi_k2 configs name DeepseekV3ForCausalLM: the DeepSeek-V3 builder.
TEST(DeepseekBuilder, KimiK2IsDeepseekV3) {
  auto j = TinyDeepseekV3();
  j["model_type"] = "kimi_k2";
  j["architectures"] = {"DeepseekV3ForCausalLM"};
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 7344u);
}

TEST(DeepseekBuilder, DsaHostileConfigsNameTheField) {
  auto j = TinyDeepseekV3();
  j["model_type"] = "deepseek_v32";
  j["index_head_dim"] = 4;
  testing::ExpectError(j, "index_n_heads");
  j["index_n_heads"] = 2;
  j["q_lora_rank"] = nullptr;
  testing::ExpectError(j, "q_lora_rank");
  j = TinyDeepseekV3();
  j["model_type"] = "glm_moe_dsa";
  j["index_n_heads"] = 2;
  j["index_head_dim"] = 4;
  j["indexer_types"] = {"full", "sometimes"};
  testing::ExpectError(j, "indexer_types");
  j["indexer_types"] = 7;
  testing::ExpectError(j, "indexer_types");
  j.erase("indexer_types");
  j["index_n_heads"] = uint64_t{1} << 40;
  j["index_head_dim"] = uint64_t{1} << 40;
  testing::ExpectError(j, "index_n_heads");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// DeepSeek-R1's weight index is not in the eval set, but the exact sizes of its 163 safetensors
// files are: their sum is the stored bytes plus the 163 JSON headers. A header entry is about
// 130 bytes per tensor ({"model.layers.N....":{"dtype":...,"shape":[...],"data_offsets":[...]}}),
// so config-only stored bytes must lie in [sum - 160 x tensors - 8 x files, sum]. Storing the MTP
// layer's eh_proj in fp8 instead of bfloat16 (102 MB less) or dropping the MTP layer fails it.
TEST(DeepseekBuilder, DeepSeekR1MatchesItsShardSizes) {
  auto m = testing::BuildEvalConfig("models/deepseek-ai__DeepSeek-R1");
  auto sizes = testing::ReadEvalFile("models/deepseek-ai__DeepSeek-R1", "lfs_shard_sizes.tsv");
  if (!m || !sizes) GTEST_SKIP() << "DeepSeek-R1 files absent";
  uint64_t sum = 0, files = 0;
  std::istringstream lines(*sizes);
  std::string name, size;
  while (lines >> name >> size) {
    sum += std::stoull(size);
    ++files;
  }
  ASSERT_EQ(files, 163u);
  const uint64_t stored = ComputeTotals(*m).stored_bytes;
  ASSERT_LE(stored, sum);
  EXPECT_LE(sum - stored, 160 * m->tensors.size() + 8 * files)
      << "stored " << stored << " vs shard sum " << sum << " over " << m->tensors.size()
      << " tensors";
  EXPECT_EQ(m->hp.layers.size(), 61u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
