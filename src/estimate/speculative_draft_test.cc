// SGLang's NEXTN draft (estimate/speculative_draft.h) on the tiny DeepSeek-V3 that
// model/arch/deepseek_test.cc counts by hand, worked by hand.

#include "estimate/speculative_draft.h"

#include <gtest/gtest.h>

#include "base/error_test_util.h"
#include "memfit/engine_release.h"
#include "model/arch/arch_test_util.h"

namespace memfit {
namespace {
namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

constexpr uint64_t kMiBytes = uint64_t{1} << 20;

Model TinyV3(uint64_t mtp_layers) {
  auto m = arch::testing::BuildJson(arch::testing::TinyMlaMoe(
      "deepseek_v3", {{"architectures", {"DeepseekV3ForCausalLM"}},
                      {"num_nextn_predict_layers", mtp_layers},
                      {"num_key_value_heads", nullptr}}));
  EXPECT_TRUE(m) << m.error().message;
  return std::move(*m);
}

InferenceOptions Sglang(std::string algorithm) {
  InferenceOptions o;
  o.engine = Engine::kSglang;
  o.dtype = Dtype::kBF16;
  o.gpu_memory_bytes = kMiBytes;
  o.gpu_memory_utilization = 0.5;  // given: SGLang's rule does not apply
  o.speculative_algorithm = std::move(algorithm);
  return o;
}

// The MTP layer (deepseek_test.cc): 744 parameters, less its embed_tokens and shared_head.head
// (80 each, the target's in SGLang): 584 at --dtype bfloat16, and a float32
// e_score_correction_bias [2], kept in float32 by the weights estimator as the target's is:
// 584 x 2 + 2 x 4 = 1176 bytes. Its MLA latent per token in
// bfloat16: (kv_lora 4 + rope 2) x 2 = 12 bytes; the target's two layers 24. DeepseekV3 takes
// (3 steps, top-k 1, 4 draft tokens): 48 x 3 x 1 + 48 x 4 + 100 = 436 headroom tokens.
TEST(SpeculativeDraft, NextnDraftOfTheTinyV3ByHand) {
  const Model m = TinyV3(1);
  EXPECT_EQ(m.architecture, "DeepseekV3ForCausalLM");
  auto e = EstimateInference(m, Sglang("NEXTN"));
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->draft.weights_bytes, 1176u);
  EXPECT_EQ(e->draft.kv_bytes_per_token, 12u);
  EXPECT_EQ(e->draft.headroom_tokens, 436u);
  ASSERT_TRUE(e->serving);
  const ServingBudget& s = *e->serving;
  EXPECT_EQ(s.page_bytes, 24u);
  ASSERT_GT(s.token_capacity, 0u);
  EXPECT_EQ(s.draft_bytes, 1176 + (s.token_capacity + 436) * 12 + 436 * 24);
  // Outside the static fraction: the total is the same deployment's without the draft, plus it.
  auto plain = EstimateInference(m, Sglang(""));
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->serving->token_capacity, s.token_capacity);
  EXPECT_EQ(plain->serving->draft_bytes, 0u);
  EXPECT_EQ(e->total_bytes, plain->total_bytes + s.draft_bytes);
  EXPECT_TRUE(s.fits);
}

// SGLang 0.5.14 on: the draft inside the fraction. Its 1176 bytes of weights beside the target's
// before the pool is sized, and its 12 bytes per token in every pool token (a page of 24 + 12 =
// 36), no headroom and nothing outside the budget.
TEST(SpeculativeDraft, InsideTheFractionFrom0514) {
  const Model m = TinyV3(1);
  InferenceOptions o = Sglang("NEXTN");
  auto release = FindEngineRelease(Engine::kSglang, "0.5.15");
  ASSERT_TRUE(release);
  o.release = *release;
  auto e = EstimateInference(m, o);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_TRUE(e->draft.inside_budget);
  EXPECT_EQ(e->draft.headroom_tokens, 0u);
  const ServingBudget& s = *e->serving;
  EXPECT_EQ(s.draft_bytes, 0u);
  EXPECT_EQ(s.page_bytes, 36u);
  InferenceOptions plain_o = Sglang("");
  plain_o.release = *release;
  auto plain = EstimateInference(m, plain_o);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(s.non_kv_bytes, plain->serving->non_kv_bytes + 1176);
  EXPECT_EQ(s.kv_pool_bytes, plain->serving->kv_pool_bytes - 1176);
  EXPECT_EQ(s.token_capacity, s.kv_pool_bytes / 36);
  EXPECT_EQ(e->total_bytes, plain->total_bytes);  // the same budget, shared differently
}

// At 0.99 of the GPU the pool leaves 1% for the draft, which needs about half the GPU again.
TEST(SpeculativeDraft, ADraftThatDoesNotFitIsSaid) {
  InferenceOptions o = Sglang("NEXTN");
  o.gpu_memory_utilization = 0.99;
  auto e = EstimateInference(TinyV3(1), o);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_GT(e->serving->requested_bytes + e->serving->draft_bytes, kMiBytes);
  EXPECT_FALSE(e->serving->fits);
  EXPECT_GT(e->total_bytes, kMiBytes);
}

// The draft's weights go through the target's weights estimator and split: --quant re-quantizes
// them as it does the target's, and the MTP layer's tensors are split as the target's are.
TEST(SpeculativeDraft, TheDraftIsLoadedAsTheTargetIs) {
  InferenceOptions o = Sglang("NEXTN");
  auto awq = ParseQuant("awq");
  ASSERT_TRUE(awq) << awq.error().message;
  o.quant = *awq;
  auto q = EstimateInference(TinyV3(1), o);
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_GT(q->draft.weights_bytes, 0u);
  EXPECT_LT(q->draft.weights_bytes, 1176u);
  // The target's weights estimator with the MTP layer loaded, under the same --quant: the draft
  // is the MTP layer's tensors at their bytes there, less its embedding and head (the target's).
  const Model plain = TinyV3(1);
  Model loaded = plain;
  for (Tensor& t : loaded.tensors) t.loaded = t.loaded || t.stored;
  auto with = PrepareInferenceWeights(loaded, o);
  ASSERT_TRUE(with) << with.error().message;
  uint64_t mtp = 0;
  for (size_t i = 0; i < plain.tensors.size(); ++i) {
    const std::string& name = plain.tensors[i].name;
    if (plain.tensors[i].loaded || name.ends_with("embed_tokens.weight") ||
        name.ends_with("shared_head.head.weight")) {
      continue;
    }
    mtp += with->weights.tensor_bytes[i];
  }
  EXPECT_EQ(q->draft.weights_bytes, mtp);
}

TEST(SpeculativeDraft, NextnNeedsMtpLayersAndOtherDraftsAreNotRead) {
  testing::ExpectErrorContains(EstimateInference(TinyV3(0), Sglang("NEXTN")),
                               "--speculative-algorithm NEXTN: ");
  auto eagle = EstimateInference(TinyV3(1), Sglang("EAGLE"));
  ASSERT_TRUE(eagle) << eagle.error().message;
  EXPECT_EQ(eagle->draft.weights_bytes, 0u);
  EXPECT_EQ(eagle->serving->draft_bytes, 0u);
  // The 2025 defaults: (5, 4, 8) for classes SGLang does not list.
  const estimate::SpeculativeParams p = estimate::SglangSpeculativeDefaults("MiMoForCausalLM");
  EXPECT_EQ(p.num_steps * p.eagle_topk * 48 + p.num_draft_tokens * 48 + 100, 1444u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
