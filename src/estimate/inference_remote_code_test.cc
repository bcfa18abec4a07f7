// Inference in transformers for a model type older releases do not have (the Hub's own modeling
// code, trust_remote_code) and MLA's prefill cache views: validation/FINDINGS.md 1i, 1j.

#include <gtest/gtest.h>

#include "estimate/hand_count_test_util.h"
#include "memfit/estimate_inference.h"
#include "model/arch/arch_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// DeepSeek-V3 shape, small enough to count by hand: 2 MLA layers of 2 heads, qk_nope 2, rope 2,
// v 2 (cache per token and layer: 2 x (4 + 2) = 12 elements), vocab 1000, hidden 8.
nlohmann::json TinyV3() {
  return {{"model_type", "deepseek_v3"}, {"architectures", {"DeepseekV3ForCausalLM"}},
          {"vocab_size", 1000}, {"hidden_size", 8}, {"num_hidden_layers", 2},
          {"num_attention_heads", 2}, {"intermediate_size", 12}, {"moe_intermediate_size", 3},
          {"n_routed_experts", 2}, {"n_shared_experts", 1}, {"num_experts_per_tok", 1},
          {"first_k_dense_replace", 1}, {"q_lora_rank", 4}, {"kv_lora_rank", 4},
          {"qk_nope_head_dim", 2}, {"qk_rope_head_dim", 2}, {"v_head_dim", 2},
          {"num_nextn_predict_layers", 0}, {"max_position_embeddings", 4096},
          {"torch_dtype", "float32"}};
}

InferenceEstimate Estimate(Dtype dtype, LibraryVersion transformers) {
  auto model = arch::testing::BuildJson(TinyV3());
  EXPECT_TRUE(model) << model.error().message;
  InferenceOptions o = estimate_test::HandCountOptions(1, 100, dtype, AttnImpl::kSdpa);
  o.versions.transformers = transformers;
  return estimate_test::EstimateOk(*model, o);
}

// transformers 4.50 has no deepseek_v3 class (4.51 added it): the Hub's modeling_deepseek.py
// runs, and its forward returns `self.lm_head(hidden_states).float()` for all 100 prompt
// tokens. float32: hidden 100 x 8 x 4 = 3,200 + logits 100 x 1000 x 4 = 400,000 (the upcast is
// a no-op) + generate()'s clone of the last row 1000 x 4 = 4,000 + the value views of both MLA
// layers (100 tokens x 2 heads x qk_nope 2 x 4 = 1,600 each) + inputs_embeds, which the model's
// forward keeps (100 x 8 x 4 = 3,200) = 413,600 beside the whole cache.
TEST(InferenceRemoteCode, DeepseekV3Before451UpcastsEveryLogit) {
  InferenceEstimate e = Estimate(Dtype::kF32, {4, 50});
  EXPECT_EQ(e.activation_peak_at, "logits");
  EXPECT_EQ(e.activation_bytes, 413600u);
  bool said = false;
  for (const auto& a : e.assumptions) said = said || a.find("trust_remote_code") != a.npos;
  EXPECT_TRUE(said);
  // bfloat16: hidden 1,600 + logits 100 x 1000 x (2 + 4) = 600,000 (bf16 and its float32 copy
  // together) + views 2 x 800 + inputs_embeds 1,600 = 604,800.
  EXPECT_EQ(Estimate(Dtype::kBF16, {4, 50}).activation_bytes, 604800u);
}

// From 4.51 the native class keeps the last token's logits (logits_to_keep): the remote-code
// term disappears, the MLA value views stay (the native attention splits kv_b_proj's output
// the same way).
TEST(InferenceRemoteCode, NativeDeepseekV3KeepsTheLastTokensLogits) {
  InferenceEstimate native = Estimate(Dtype::kF32, {4, 51});
  EXPECT_LT(native.activation_bytes, 100000u);
  for (const auto& a : native.assumptions) EXPECT_EQ(a.find("trust_remote_code"), a.npos) << a;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
