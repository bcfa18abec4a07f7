// Hand-counted tests for the Qwen vision-language builders: qwen3_5 / qwen3_5_moe, qwen3_vl /
// qwen3_vl_moe, qwen2_vl / qwen2_5_vl. Real checkpoints: tests/qwen_ground_truth_test.cc.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

// One block of width 4 (2 heads), MLP 6, projecting to 8; 1x2x2 patches of 1 channel, no merge.
nlohmann::json TinyQwen3Vision() {
  return {{"depth", 1}, {"hidden_size", 4}, {"intermediate_size", 6}, {"num_heads", 2},
          {"out_hidden_size", 8}, {"patch_size", 2}, {"temporal_patch_size", 1},
          {"spatial_merge_size", 1}, {"in_channels", 1}, {"num_position_embeddings", 3},
          {"deepstack_visual_indexes", nlohmann::json::array()}};
}

nlohmann::json TinyQwen35() {
  nlohmann::json text = {
      {"vocab_size", 10}, {"hidden_size", 8}, {"num_hidden_layers", 2},
      {"num_attention_heads", 2}, {"num_key_value_heads", 1}, {"head_dim", 4},
      {"intermediate_size", 12}, {"layer_types", {"linear_attention", "full_attention"}},
      {"linear_num_key_heads", 1}, {"linear_num_value_heads", 2}, {"linear_key_head_dim", 2},
      {"linear_value_head_dim", 3}, {"linear_conv_kernel_dim", 4}, {"attn_output_gate", true},
      {"mtp_num_hidden_layers", 1}, {"mamba_ssm_dtype", "float32"}, {"dtype", "float32"},
      {"rope_parameters", {{"partial_rotary_factor", 0.5}}}};
  return {{"model_type", "qwen3_5"}, {"architectures", {"Qwen3_5ForConditionalGeneration"}},
          {"tie_word_embeddings", false}, {"text_config", text},
          {"vision_config", TinyQwen3Vision()}};
}

// Text: the Qwen3-Next count of qwen3_next_test.cc with a dense MLP 3x8x12 = 288 in place of
// the 288-parameter MoE block, and in_proj_qkv 8x10 + in_proj_z 8x6 + in_proj_b 8x2 +
// in_proj_a 8x2 = 160 = in_proj_qkvz 128 + in_proj_ba 32: 1295.
// Vision: patch_embed Conv3d [4, 1, 1, 2, 2] 16 + bias 4, pos_embed 3x4 = 12; block: norm1 and
// norm2 (LayerNorm) 8 + 8, qkv 4x12 + 12 = 60, proj 16 + 4 = 20, linear_fc1 4x6 + 6 = 30,
// linear_fc2 6x4 + 4 = 28: 154; merger: norm 8, linear_fc1 16 + 4 = 20, linear_fc2 4x8 + 8 =
// 40: 68. Vision 254; loaded 1549. MTP: fc 128 + norms 16 + full-attention layer 568 + norm 8 =
// 720 (not loaded). Stored (all float32): (1549 + 720) x 4 = 9076.
TEST(Qwen35Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyQwen35(), 1549u, 9076u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 254u);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0, {.mixer = LayerMixer::kGatedDeltaNet, .state_bits = 32u});
  testing::ExpectLayer(m->hp, 1, {.attention = AttentionKind::kFull});
  EXPECT_EQ(m->hp.text_config_key, "text_config");
  EXPECT_EQ(m->model_type, "qwen3_5");
  testing::ExpectShape(*m, "model.language_model.layers.0.linear_attn.in_proj_qkv.weight", {10, 8});
  EXPECT_NE(FindTensor(*m, "model.visual.merger.linear_fc2.weight"), nullptr);
  EXPECT_FALSE(FindTensor(*m, "mtp.layers.0.self_attn.q_proj.weight")->loaded);
  const size_t assumptions = m->assumptions.size();
  auto j = TinyQwen35();
  j["text_config"]["mtp_use_dedicated_embeddings"] = true;
  auto dedicated = BuildJson(j);
  ASSERT_TRUE(dedicated);
  EXPECT_EQ(dedicated->assumptions.size(), assumptions + 1);
  // rotary over int(4 x 0.5) = 2 dimensions: one inv_freq entry.
  testing::ExpectShape(*m, "model.language_model.rotary_emb.inv_freq", {1});
}

// bfloat16 weights: A_log and linear_attn.norm stay float32 (2 + 3 entries x 2 extra bytes).
TEST(Qwen35Builder, GatedDeltaNetParametersStayFloat32) {
  auto j = TinyQwen35();
  j["text_config"]["dtype"] = "bfloat16";
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(FindTensor(*m, "model.language_model.layers.0.linear_attn.A_log")->dtype, Dtype::kF32);
  EXPECT_EQ(FindTensor(*m, "model.language_model.layers.0.linear_attn.norm.weight")->dtype,
            Dtype::kF32);
  EXPECT_EQ(ComputeTotals(*m).stored_bytes, 2269u * 2 + 5 * 2);
}

// qwen3_5_moe: two experts of width 3 and a shared expert of width 5 per layer, stored fused:
// router 2x8 = 16, gate_up_proj [2, 6, 8] = 96, down_proj [2, 8, 3] = 48, shared expert 3x8x5 =
// 120, shared gate 8: 288, the dense MLP's count. The MTP layer keeps per-expert tensors.
TEST(Qwen35Builder, MoeExpertsFused) {
  auto j = TinyQwen35();
  j["model_type"] = "qwen3_5_moe";
  j["text_config"].erase("intermediate_size");
  j["text_config"]["num_experts"] = 2;
  j["text_config"]["num_experts_per_tok"] = 1;
  j["text_config"]["moe_intermediate_size"] = 3;
  j["text_config"]["shared_expert_intermediate_size"] = 5;
  auto m = testing::BuildCounted(j, 1549u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.language_model.layers.1.mlp.experts.gate_up_proj", {2, 6, 8});
  EXPECT_NE(FindTensor(*m, "mtp.layers.0.mlp.experts.1.down_proj.weight"), nullptr);
  EXPECT_TRUE(m->hp.layers[0].moe);
}

TEST(Qwen35Builder, HostileConfigsNameTheField) {
  testing::ExpectPatchRejected(TinyQwen35(), {{"vision_config", nullptr}}, "vision_config");
  testing::ExpectPatchRejected(TinyQwen35(),
                               {{"text_config", {{"linear_conv_kernel_dim", nullptr}}}},
                               "linear_conv_kernel_dim");
  testing::ExpectPatchRejected(TinyQwen35(), {{"vision_config", {{"num_heads", 3}}}}, "num_heads");
  testing::ExpectPatchRejected(
      TinyQwen35(), {{"text_config", {{"layer_types", {"linear_attention", "sliding_attention"}}}}},
      "layer_types");
  testing::ExpectPatchRejected(
      TinyQwen35(),
      {{"vision_config",
        {{"hidden_size", uint64_t{1} << 40}, {"spatial_merge_size", uint64_t{1} << 20}}}},
      "");
}

nlohmann::json TinyQwen3Vl() {
  nlohmann::json text = {{"vocab_size", 10}, {"hidden_size", 8}, {"num_hidden_layers", 2},
                         {"num_attention_heads", 2}, {"num_key_value_heads", 1},
                         {"head_dim", 4}, {"intermediate_size", 12}, {"dtype", "float32"}};
  auto vision = TinyQwen3Vision();
  vision["deepstack_visual_indexes"] = {0};
  return {{"model_type", "qwen3_vl"}, {"architectures", {"Qwen3VLForConditionalGeneration"}},
          {"tie_word_embeddings", false}, {"text_config", text}, {"vision_config", vision}};
}

// Text (Qwen3): per layer norms 16, q 8x8 = 64, k and v 8x4 = 32 each, o 64, q_norm and k_norm
// 4 each, MLP 3x8x12 = 288: 504; x2 + embed 80 + norm 8 + lm_head 80 = 1176. Vision: the 254 of
// the Qwen3.5 test plus one deepstack merger, whose norm is over the merged width (4): 68 ->
// 322. Total 1498, float32: 5992 bytes.
TEST(Qwen3VlBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyQwen3Vl(), 1498u, 5992u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 322u);
  EXPECT_NE(FindTensor(*m, "model.language_model.layers.1.self_attn.q_norm.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.visual.deepstack_merger_list.0.norm.bias"), nullptr);
  EXPECT_NE(FindTensor(*m, "lm_head.weight"), nullptr);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  EXPECT_EQ(m->hp.layers[0].head_dim_k, 4u);
  // Tied: lm_head shares model.language_model.embed_tokens (80 parameters fewer).
  auto j = TinyQwen3Vl();
  j["tie_word_embeddings"] = true;
  auto tied = testing::BuildCounted(j, 1418u);
  ASSERT_TRUE(tied);
  EXPECT_EQ(FindTensor(*tied, "lm_head.weight")->tied_to,
            "model.language_model.embed_tokens.weight");
}

// qwen3_vl_moe: per layer router 16 + gate_up_proj [2, 8, 6] = 96 + down_proj [2, 3, 8] = 48 =
// 160 instead of the 288 dense MLP: 1498 - 2 x 128 = 1242.
TEST(Qwen3VlBuilder, MoeExpertsFusedInputFirst) {
  auto j = TinyQwen3Vl();
  j["model_type"] = "qwen3_vl_moe";
  j["text_config"]["num_experts"] = 2;
  j["text_config"]["num_experts_per_tok"] = 1;
  j["text_config"]["moe_intermediate_size"] = 3;
  auto m = testing::BuildCounted(j, 1242u);
  ASSERT_TRUE(m);
  testing::ExpectShape(*m, "model.language_model.layers.0.mlp.experts.gate_up_proj", {2, 8, 6});
  EXPECT_EQ(FindTensor(*m, "model.language_model.layers.0.mlp.experts.0.up_proj.weight"), nullptr);
  EXPECT_TRUE(m->hp.layers[1].moe);
  j["text_config"]["moe_intermediate_size"] = 0;  // zero-sized experts: built, no division by 0
  auto empty = testing::BuildCounted(j, 1242u - 2 * 144);
  ASSERT_TRUE(empty);
  j["text_config"].erase("moe_intermediate_size");
  testing::ExpectError(j, "moe_intermediate_size");
}

nlohmann::json TinyQwen2Vl() {
  return testing::TinyDecoderWith(
      "qwen2_vl", {{"architectures", {"Qwen2VLForConditionalGeneration"}},
                   {"vision_config",
                    {{"depth", 1},
                     {"embed_dim", 4},
                     {"mlp_ratio", 2},
                     {"num_heads", 2},
                     {"hidden_size", 8},
                     {"in_chans", 1},
                     {"patch_size", 2},
                     {"temporal_patch_size", 1},
                     {"spatial_merge_size", 1}}},
                   {"max_position_embeddings", nullptr}});
}

// Text (Qwen2, q/k/v biases): per layer norms 16, q 64 + 8, k 32 + 4, v 32 + 4, o 64, MLP 288:
// 512; x2 + embed 80 + norm 8 + lm_head 80 = 1192. Vision: Conv3d without bias 16; block: norm1
// and norm2 8 + 8, qkv 60, proj 20, fc1 4x8 + 8 = 40, fc2 8x4 + 4 = 36: 172; merger: ln_q 8,
// mlp.0 20, mlp.2 40: 68. Vision 256; total 1448.
TEST(Qwen2VlBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyQwen2Vl(), 1448u);
  ASSERT_TRUE(m);
  EXPECT_EQ(arch_test::ComponentParameters(*m, "vision_tower"), 256u);
  // The layout of transformers < 4.52 (text keys at the top level).
  EXPECT_NE(FindTensor(*m, "model.layers.0.self_attn.q_proj.bias"), nullptr);
  EXPECT_NE(FindTensor(*m, "visual.merger.mlp.2.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "visual.patch_embed.proj.bias"), nullptr);
}

// Qwen2.5-VL: RMSNorm (weight only) and a gated MLP with biases. Block: norms 4 + 4, qkv 60,
// proj 20, gate and up 4x6 + 6 = 30 each, down 6x4 + 4 = 28: 176; merger ln_q 4 + 20 + 40 = 64;
// + conv 16: 256. A text_config selects the layout of transformers >= 4.52.
TEST(Qwen2VlBuilder, Qwen25VlNestedLayout) {
  nlohmann::json text = TinyQwen2Vl();
  text.erase("vision_config");
  text.erase("architectures");
  nlohmann::json j = {{"model_type", "qwen2_5_vl"},
                      {"architectures", {"Qwen2_5_VLForConditionalGeneration"}},
                      {"text_config", text},
                      {"vision_config", {{"depth", 1}, {"hidden_size", 4},
                                         {"intermediate_size", 6}, {"num_heads", 2},
                                         {"out_hidden_size", 8}, {"in_chans", 1},
                                         {"patch_size", 2}, {"temporal_patch_size", 1},
                                         {"spatial_merge_size", 1}}}};
  auto m = testing::BuildCounted(j, 1448u);
  ASSERT_TRUE(m);
  EXPECT_NE(FindTensor(*m, "model.language_model.layers.1.mlp.up_proj.weight"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.visual.blocks.0.mlp.gate_proj.bias"), nullptr);
  j["vision_config"].erase("depth");
  testing::ExpectError(j, "depth");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
