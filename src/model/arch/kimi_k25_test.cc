// Kimi-K2.5 (kimi_k25): the DeepSeek-V3 text builder under language_model., the MoonViT3d tower
// and the patch-merger projector, counted by hand; the real configs (BF16 and NVIDIA's NVFP4).

#include <gtest/gtest.h>

#include "memfit/hf_config.h"
#include "model/arch/arch_test_util.h"
#include "test_support.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyKimiK25() {
  return testing::TinyComposite(
      "kimi_k25", testing::TinyMlaMoe("deepseek_v3", {{"num_key_value_heads", nullptr}}),
      {{"architectures", {"KimiK25ForConditionalGeneration"}},
       {"vision_config",
        {{"vt_hidden_size", 8},
         {"vt_intermediate_size", 16},
         {"vt_num_hidden_layers", 2},
         {"vt_num_attention_heads", 2},
         {"patch_size", 2},
         {"init_pos_emb_height", 4},
         {"init_pos_emb_width", 4},
         {"init_pos_emb_time", 2},
         {"mm_hidden_size", 8},
         {"merge_kernel_size", {2, 2}},
         {"text_hidden_size", 8},
         {"mm_projector_type", "patchmerger"}}}});
}

// Language model (deepseek_test.cc's hand count without the MTP layer): 1088 parameters.
// Tower: proj conv 3x8x2x2 + 8 = 104; pos_emb 4x4x8 = 128; per block: norm0 + norm1 2 x 16 = 32,
// fc0 8x16 + 16 = 144, fc1 16x8 + 8 = 136, wqkv 8x24 + 24 = 216, wo 8x8 + 8 = 72 -> 600, two
// blocks 1200; final_layernorm 16 -> 1448. Projector: pre_norm 16, proj.0 32x32 + 32 = 1056,
// proj.2 32x8 + 8 = 264 -> 1336. Total 1088 + 1448 + 1336 = 3872 parameters; resident adds the
// float32 time_weight buffer [2, 1, 8] = 64 bytes (not stored). Stored: 3872 x 4 + the MoE
// layer's float32 e_score_correction_bias [2] (8 bytes) = 15496.
TEST(KimiK25Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyKimiK25(), 3872u);
  ASSERT_TRUE(m);
  auto t = ComputeTotals(*m);
  arch_test::ExpectComponentParameters(*m, {{"vision_tower", 1448u},
                                            {"mm_projector", 1336u},
                                            {"language_model", 1088u}});
  EXPECT_EQ(t.stored_bytes, 15496u);
  EXPECT_EQ(t.resident_bytes, 15496u + 64 + 4);
  EXPECT_NE(FindTensor(*m, "language_model.model.layers.1.mlp.experts.1.down_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "language_model.lm_head.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "vision_tower.encoder.blocks.1.wqkv.bias"), nullptr);
  EXPECT_NE(FindTensor(*m, "mm_projector.proj.2.weight"), nullptr);
  EXPECT_EQ(m->model_type, "kimi_k25");
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.layers[1].attention, AttentionKind::kMla);
}

TEST(KimiK25Builder, HostileVisionConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyKimiK25(), {{"vision_config", {{"merge_kernel_size", {2}}}}},
                               "merge_kernel_size");
  testing::ExpectPatchRejected(TinyKimiK25(), {{"vision_config", {{"mm_projector_type", "mlp"}}}},
                               "mm_projector_type");
  testing::ExpectPatchRejected(TinyKimiK25(), {{"vision_config", {{"vt_hidden_size", nullptr}}}},
                               "vt_hidden_size");
  testing::ExpectPatchRejected(TinyKimiK25(), {{"text_config", {{"model_type", "llama"}}}},
                               "text_config.model_type");
}

// The real dimensions (vt_hidden 1152, vt_intermediate 4304, 27 blocks, patch 14, pos_emb 64x64,
// merge 2x2, text hidden 7168): proj 3x1152x14x14 + 1152 = 678528; pos_emb 4718592; per block
// norms 4608 + fc0 4962512 + fc1 4959360 + wqkv 3984768 + wo 1328256 = 15239504, x27 =
// 411466608; final norm 2304 -> tower 416866032 (the card's "MoonViT, 400M"). Projector:
// 2304 + (4608^2 + 4608) + (4608 x 7168 + 7168) = 54277888.
// Kimi-K2.5 ships native INT4 (compressed-tensors pack-quantized, group 32, symmetric) for the
// routed experts only ("ignore": lm_head, self_attn, shared_experts, the dense MLP). Stored bytes
// by hand (h 7168, 61 layers, 1 dense, 384 experts of 2048, q_lora 1536, kv_lora 512, 64 heads,
// nope 128, rope 64, v 128, vocab 163840, bf16): attention per layer 2 x (1536 x 7168 + 1536 +
// 576 x 7168 + 512 + 64 x 192 x 1536 + 64 x 256 x 512 + 7168 x 8192) + 2 x 2 x 7168; dense MLP
// 3 x 7168 x 18432 x 2; an INT4 linear [out, in]: out x in / 2 (int32 words) + out x in / 32 x 2
// (bf16 scales) + 16 (weight_shape); an expert 3 such of 2048 x 7168; shared expert 3 x 7168 x
// 2048 x 2; router 384 x 7168 x 2 + 384 x 4; embed and lm_head 2 x 163840 x 7168 x 2; norm
// 7168 x 2 -> language model 594,206,457,856; plus tower and projector in bf16 (471,143,920 x 2)
// = 595,148,745,696 (the Hub lists 595 GB).
TEST(KimiK25Builder, RealConfigsBf16AndNvfp4) {
  auto int4 = testing::BuildEvalConfig("recent/moonshotai__Kimi-K2.5");
  if (!int4) GTEST_SKIP() << "../shared/eval/recent/moonshotai__Kimi-K2.5 not available";
  EXPECT_EQ(arch_test::ComponentParameters(*int4, "vision_tower"), 416866032u);
  EXPECT_EQ(arch_test::ComponentParameters(*int4, "mm_projector"), 54277888u);
  EXPECT_EQ(ComputeTotals(*int4).stored_bytes, 595148745696u);
  const Tensor* packed =
      FindTensor(*int4, "language_model.model.layers.5.mlp.experts.100.down_proj.weight_packed");
  ASSERT_NE(packed, nullptr);
  EXPECT_EQ(packed->dtype, Dtype::kI32);
  EXPECT_EQ(packed->shape, (std::vector<uint64_t>{7168, 2048 / 8}));
  const Tensor* shared =
      FindTensor(*int4, "language_model.model.layers.5.mlp.shared_experts.down_proj.weight");
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->dtype, Dtype::kBF16);
  const auto& bf16 = int4;
  EXPECT_EQ(bf16->model_type, "kimi_k25");
  for (const auto& a : bf16->assumptions) {
    EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  }
  // NVIDIA's NVFP4 release: attention (every layer's self_attn), the tower, the projector and
  // lm_head stay bf16 ("ignore"); the MLPs are NVFP4 (packed uint8 + E4M3 scales per 16).
  auto fp4 = testing::BuildEvalConfig("recent/nvidia__Kimi-K2.5-NVFP4");
  if (!fp4) GTEST_SKIP() << "nvidia__Kimi-K2.5-NVFP4 not available";
  const Tensor* q = FindTensor(*fp4, "language_model.model.layers.3.self_attn.q_a_proj.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dtype, Dtype::kBF16);
  const Tensor* e = FindTensor(*fp4, "language_model.model.layers.3.mlp.experts.7.gate_proj.weight");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->dtype, Dtype::kU8);
  EXPECT_EQ(e->shape, (std::vector<uint64_t>{2048, 7168 / 2}));
  testing::ExpectShape(*fp4, "language_model.model.layers.3.mlp.experts.7.gate_proj.weight_scale",
                       {2048, 7168 / 16});
  const Tensor* v = FindTensor(*fp4, "vision_tower.encoder.blocks.0.wqkv.weight");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->dtype, Dtype::kBF16);
  const Tensor* head = FindTensor(*fp4, "language_model.lm_head.weight");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->dtype, Dtype::kBF16);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
