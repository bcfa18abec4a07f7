// ERNIE 4.5 MoE (ernie4_5_moe): a two-layer config counted by hand (one dense layer before
// moe_layer_start_index, one MoE layer with a shared expert, the float32 router and routing
// bias, one stored-only MTP module), the class defaults printed as assumptions, the
// moe_layer_* window, biases, hostile configs, and ERNIE-4.5-21B-A3B-PT at full size.

#include <gtest/gtest.h>

#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::FindTensor;

nlohmann::json TinyErnieMoe() {
  auto j = testing::TinyDecoder("ernie4_5_moe");  // vocab 10, hidden 8, 2 heads of 4, 1 KV, I 12
  j["architectures"] = {"Ernie4_5_MoeForCausalLM"};
  j["moe_num_experts"] = 2;
  j["moe_k"] = 1;
  j["moe_intermediate_size"] = 3;
  j["moe_num_shared_experts"] = 1;
  j["moe_layer_start_index"] = 1;
  j["moe_layer_end_index"] = -1;
  j["moe_layer_interval"] = 1;
  j["use_bias"] = false;
  j["num_nextn_predict_layers"] = 1;
  return j;  // tie_word_embeddings absent: Ernie4_5_MoeConfig's default true
}

// Hidden 8, vocab 10, head tied (class default): embed 80, lm_head 0.
// Attention (2 heads of 4, 1 KV head): q [8, 8] 64, k [4, 8] 32, v 32, o [8, 8] 64 = 192;
// input and post-attention norms 16.
// Layer 0 (dense: 0 < moe_layer_start_index 1): mlp gate/up [12, 8] 96 each, down [8, 12] 96 =
//   288; layer 16 + 192 + 288 = 496.
// Layer 1 (MoE): gate [2, 8] 16 (float32), moe_statics.e_score_correction_bias [1, 2] 2,
//   2 experts x 3 x (3 x 8) = 144, shared_experts of width 3 x 1: 72; 16 + 192 + 16 + 2 + 144 +
//   72 = 442.
// model.norm 8: 80 + 496 + 442 + 8 = 1026 parameters loaded.
// MTP module 0 (stored, not loaded): mtp_emb_norm 8, mtp_hidden_norm 8, mtp_linear_proj [8, 16]
//   128, mtp_block.0 (a dense layer) 496: 640. Stored float32 bytes (1026 + 640) x 4 = 6664.
TEST(Ernie45MoeBuilder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyErnieMoe(), 1026u, 6664u);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 0, {.moe = false, .intermediate_size = 12u});
  testing::ExpectLayer(m->hp, 1, {.moe = true});
  EXPECT_EQ(m->hp.num_mtp_layers, 1u);
  EXPECT_EQ(m->hp.num_shared_experts, 1u);
  const Tensor* gate = FindTensor(*m, "model.layers.1.mlp.gate.weight");
  ASSERT_NE(gate, nullptr);
  EXPECT_EQ(gate->dtype, Dtype::kF32);
  const Tensor* bias = FindTensor(*m, "model.layers.1.mlp.moe_statics.e_score_correction_bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->shape, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(bias->kind, TensorKind::kParameter);
  testing::ExpectShape(*m, "model.layers.1.mlp.shared_experts.down_proj.weight", {8, 3});
  EXPECT_NE(FindTensor(*m, "model.layers.0.mlp.gate_proj.weight"), nullptr);
  EXPECT_EQ(FindTensor(*m, "model.layers.0.mlp.gate.weight"), nullptr);
  const Tensor* proj = FindTensor(*m, "model.mtp_linear_proj.0.weight");
  ASSERT_NE(proj, nullptr);
  EXPECT_EQ(proj->shape, (std::vector<uint64_t>{8, 16}));
  EXPECT_FALSE(proj->loaded);
  EXPECT_NE(FindTensor(*m, "model.mtp_block.0.mlp.down_proj.weight"), nullptr);
  const Tensor* head = FindTensor(*m, "lm_head.weight");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->tied_to, "model.embed_tokens.weight");
  bool said_tie = false;
  for (const auto& a : m->assumptions) {
    said_tie |= a.find("\"tie_word_embeddings\" absent") != std::string::npos;
  }
  EXPECT_TRUE(said_tie);
}

// use_bias: q 8, k 4, v 4, o 8 = 24 per attention; a SwiGLU of width w adds w + w + 8.
// Layer 0: 24 + (12 + 12 + 8) = 56. Layer 1: 24 + 2 experts x (3 + 3 + 8) + shared 14 = 66.
// lm_head.bias [10] beside the tied weight: 1026 + 56 + 66 + 10 = 1158.
TEST(Ernie45MoeBuilder, UseBiasBiasesEveryProjectionAndTheHead) {
  auto j = TinyErnieMoe();
  j["use_bias"] = true;
  auto m = testing::BuildCounted(j, 1158u);
  ASSERT_TRUE(m);
  EXPECT_NE(FindTensor(*m, "lm_head.bias"), nullptr);
  EXPECT_NE(FindTensor(*m, "model.layers.1.mlp.experts.1.down_proj.bias"), nullptr);
}

// moe_layer_end_index 0: no layer is both >= 1 and <= 0, so both are dense:
// 80 + 2 x 496 + 8 = 1080. Interval 2 from index 0: layer 1 only ((1 + 1) % 2 == 0): 1026.
// Absent MoE keys take Ernie4_5_MoeConfig's defaults and say so.
TEST(Ernie45MoeBuilder, MoeLayerWindowAndClassDefaults) {
  auto j = TinyErnieMoe();
  j["moe_layer_end_index"] = 0;
  auto m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1080u);
  j = TinyErnieMoe();
  j["moe_layer_start_index"] = 0;
  j["moe_layer_interval"] = 2;
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(ComputeTotals(*m).parameters, 1026u);
  j = TinyErnieMoe();
  j.erase("moe_num_shared_experts");
  j.erase("moe_layer_end_index");
  m = BuildJson(j);
  ASSERT_TRUE(m) << m.error().message;
  // Two shared experts (the default): shared width 3 x 2 = 6, 3 x 8 x 6 = 144 instead of 72.
  EXPECT_EQ(ComputeTotals(*m).parameters, 1026u + 72u);
  bool shared = false, end = false;
  for (const auto& a : m->assumptions) {
    shared |= a.find("\"moe_num_shared_experts\" absent") != std::string::npos &&
              a.find("default 2") != std::string::npos;
    end |= a.find("\"moe_layer_end_index\" absent") != std::string::npos;
  }
  EXPECT_TRUE(shared);
  EXPECT_TRUE(end);
}

TEST(Ernie45MoeBuilder, HostileConfigs) {
  testing::ExpectHostileRejected("ernie4_5_moe");
  testing::ExpectPatchRejected(TinyErnieMoe(), {{"moe_layer_interval", 0}}, "moe_layer_interval");
  // the VL layout
  testing::ExpectPatchRejected(TinyErnieMoe(),
                               {{"moe_layer_start_index", nlohmann::json::array({1, 1})}},
                               "moe_layer_start_index");
  testing::ExpectPatchRejected(TinyErnieMoe(), {{"moe_num_experts", "64"}}, "moe_num_experts");
  testing::ExpectPatchRejected(TinyErnieMoe(), {{"num_nextn_predict_layers", 3}},
                               "num_nextn_predict_layers");
}

// ERNIE-4.5-21B-A3B-PT. The config: transformers' Ernie4_5_MoeConfig, whose docstring says its
// defaults yield "a similar configuration to that of baidu/ERNIE-4.5-21B-A3B-PT"
// (configuration_ernie4_5_moe.py at 001f85b3), with the published sizes every secondary source
// repeats (28 layers, 20 query / 4 KV heads of 128, hidden 2560, 64 experts top-6 of width 1536,
// 2 shared experts, first layer dense) and one MTP module (num_nextn_predict_layers, the
// checkpoint's model.mtp_* tensors that vLLM and transformers skip). No copy of the published
// config.json or of its safetensors index was found in the public mirrors searched, so stored
// bytes are not checked against an index.
// By hand: embed 103424 x 2560 = 264,765,440 (tied head); attention per layer 2 x 2560^2 +
// 2 x 2560 x 512 = 15,728,640, norms 5120; dense layer 0 3 x 2560 x 12288 = 94,371,840; each of
// 27 MoE layers 64 x 3 x 2560 x 1536 = 754,974,720 + shared 3 x 2560 x 3072 = 23,592,960 +
// router 163,840 + bias 64 = 778,731,584; final norm 2560:
// 264,765,440 + 28 x 15,733,760 + 94,371,840 + 27 x 778,731,584 + 2560 = 21,825,437,888.
// The card says "21B total parameters" (rounded down: 21.83B).
TEST(Ernie45MoeBuilder, Ernie21BA3BCountsItsParameters) {
  const nlohmann::json j = {
      {"architectures", {"Ernie4_5_MoeForCausalLM"}}, {"model_type", "ernie4_5_moe"},
      {"vocab_size", 103424}, {"hidden_size", 2560}, {"intermediate_size", 12288},
      {"num_hidden_layers", 28}, {"num_attention_heads", 20}, {"num_key_value_heads", 4},
      {"head_dim", 128}, {"max_position_embeddings", 131072}, {"hidden_act", "silu"},
      {"rms_norm_eps", 1e-5}, {"use_bias", false}, {"tie_word_embeddings", true},
      {"moe_num_experts", 64}, {"moe_k", 6}, {"moe_intermediate_size", 1536},
      {"moe_num_shared_experts", 2}, {"moe_layer_start_index", 1}, {"moe_layer_end_index", 27},
      {"moe_layer_interval", 1}, {"num_nextn_predict_layers", 1}, {"torch_dtype", "bfloat16"}};
  auto m = testing::BuildCounted(j, 21'825'437'888u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.experts_per_token, 6u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
