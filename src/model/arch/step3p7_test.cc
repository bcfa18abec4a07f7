// Step-3.5-Flash / Step-3.7-Flash (the step3p5 DecoderSpec row, decoder_families.cc).

#include <gtest/gtest.h>

#include "memfit/estimate_inference.h"
#include "memfit/estimate_load.h"
#include "model/arch/arch_test_util.h"

namespace memfit::arch {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::BuildJson;
using testing::ExpectError;
using testing::FindTensor;

// Two layers, hidden 8, float32: layer 0 full attention with a dense MLP, layer 1 sliding with
// the MoE block; one MTP layer.
nlohmann::json TinyStep3p7() {
  return testing::TinyDecoderWith(
      "step3p7", {{"architectures", {"Step3p7FlashForCausalLM"}},
                  {"head_dim", 4},
                  {"sliding_window", 4},
                  {"layer_types", {"full_attention", "sliding_attention"}},
                  {"first_k_dense_replace", 1},
                  {"num_experts", 2},
                  {"num_experts_per_tok", 1},
                  {"moe_intermediate_size", 3},
                  {"share_expert_dim", 3},
                  {"num_nextn_predict_layers", 1},
                  {"max_position_embeddings", nullptr}});
}

// embed 80. Attention (both layers): q 8 x 8 = 64, k 8 x 4 = 32, v 32, o 64, q_norm 4, k_norm 4:
// 200. Layer 0: input norm 8 + 200 + post norm 8 + mlp 3 x 8 x 12 = 288: 504. Layer 1: 8 + 200 +
// 8 + moe.gate 2 x 8 = 16 + router_bias 2 + experts gate/up [2, 3, 8] = 48 each and down
// [2, 8, 3] = 48 + share_expert 3 x 8 x 3 = 72: 450. Norm 8, lm_head 80: 1122 loaded parameters.
// MTP layer 2 (stored, not loaded): enorm 8, hnorm 8, eh_proj 16 x 8 = 128, shared_head.norm 8,
// shared_head.output 80, input norm 8, attention 200, post norm 8, mlp 288: 736. All float32:
// (1122 + 736) x 4 = 7432 stored bytes.
TEST(Step3p7Builder, TinyConfigCountsByHand) {
  auto m = testing::BuildCounted(TinyStep3p7(), 1122u, 7432u);
  ASSERT_TRUE(m);
  const Tensor* bias = FindTensor(*m, "model.layers.1.moe.router_bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->dtype, Dtype::kF32);
  testing::ExpectShape(*m, "model.layers.1.moe.up_proj.weight", {2, 3, 8});
  const Tensor* mtp = FindTensor(*m, "model.layers.2.shared_head.output.weight");
  ASSERT_NE(mtp, nullptr);
  EXPECT_FALSE(mtp->loaded);
  ASSERT_EQ(m->hp.layers.size(), 2u);
  testing::ExpectLayer(m->hp, 1, {.window_tokens = 4u, .moe = true});
  testing::ExpectLayer(m->hp, 0, {.moe = false});
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
}

// Step3p5's own keys: num_attention_groups, moe_num_experts, moe_top_k, moe_layers_enum, a
// head-wise attention gate and more query heads on sliding layers. Layer 1 (sliding, 4 heads):
// q 8 x 16 = 128 and o 128 (64 more each than the tiny count), g_proj [4, 8] = 32: +160; layer
// 0's g_proj [2, 8] = 16 (the MTP layer's is not loaded). Loaded: 1122 + 160 + 16 = 1298.
TEST(Step3p7Builder, Step3p5KeysAndHostileConfigs) {
  auto j = TinyStep3p7();
  j["model_type"] = "step3p5";
  j.erase("num_key_value_heads");
  j["num_attention_groups"] = 1;
  j.erase("num_experts");
  j["moe_num_experts"] = 2;
  j.erase("num_experts_per_tok");
  j["moe_top_k"] = 1;
  j.erase("first_k_dense_replace");
  j["moe_layers_enum"] = "1";
  j["use_head_wise_attn_gate"] = true;
  j["attention_other_setting"] = {{"num_attention_heads", 4}};
  auto m = testing::BuildCounted(j, 1298u);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->hp.layers[1].num_heads, 4u);
  j["moe_layers_enum"] = "1,7";
  ExpectError(j, "moe_layers_enum");
  testing::ExpectPatchRejected(TinyStep3p7(), {{"moe_intermediate_size", 0}},
                               "moe_intermediate_size");
  testing::ExpectPatchRejected(TinyStep3p7(), {{"num_nextn_predict_layers", 1000}},
                               "num_nextn_predict_layers");
  testing::ExpectPatchRejected(TinyStep3p7(), {{"num_experts", nullptr}}, "num_experts");
}

// stepfun-ai/Step-3.7-Flash (the text model; the card: 198B = a 196B language backbone + a 1.8B
// vision encoder, vLLM recipes page). Loaded parameters 195,832,712,256: embed and lm_head
// 2 x 128896 x 4096; 45 layers of attention 2 x 4096 x 8192 + 2 x 4096 x 1024 + 256; three
// dense MLPs 3 x 4096 x 11264; 42 MoE layers of 288 x 3 x 4096 x 1280 experts, a 3 x 4096 x 1280
// shared expert, router 288 x 4096 + 288; 91 norms of 4096. KV cache at 32,768 tokens in bf16:
// 12 full layers x 32768 x 8 x (128 + 128) x 2 bytes = 1,610,612,736, 33 sliding layers keep 512
// tokens: 33 x 512 x 4096 = 69,206,016; 1,679,818,752 bytes.
TEST(Step3p7Builder, RealStep37Flash) {
  auto m = testing::BuildEvalConfig("recent/stepfun-ai__Step-3.7-Flash");
  if (!m) GTEST_SKIP() << "../shared/eval/recent/stepfun-ai__Step-3.7-Flash is absent";
  for (const auto& a : m->assumptions) EXPECT_EQ(a.find("approximate"), std::string::npos) << a;
  EXPECT_EQ(ComputeTotals(*m).parameters, 195832712256u);
  EXPECT_NEAR(static_cast<double>(ComputeTotals(*m).parameters) / 1e9, 196.0, 0.5);
  auto kv = EstimateKvCache(*m, KvCacheOptions{.context_tokens = 32768});
  ASSERT_TRUE(kv) << kv.error().message;
  EXPECT_EQ(kv->bytes, 1679818752u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::arch
