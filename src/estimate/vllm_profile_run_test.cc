// vLLM's profile-run terms (estimate/vllm_profile_run.h): the dummy sampler run's working set per
// release and the fused MoE workspace, each worked by hand, alone and through EstimateInference.

#include "estimate/vllm_profile_run.h"

#include <gtest/gtest.h>

#include "estimate/hand_count_test_util.h"
#include "estimate/tiny_moe_test_util.h"
#include "memfit/engine_release.h"
#include "memfit/estimate_inference.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using estimate_test::EstimateOk;

using estimate_test::TinyFp8Moe;

// Per logit, bf16 (c = 2): the model-dtype logits 2 + their float32 copy 4, then
// - the sort path: values 4 + int64 indices 8 + top-k mask 1 + softmax/cumsum 4 + top-p mask 1 +
//   the scattered result 4 = 22 more: 28;
// - FlashInfer: masked logits 4 + probabilities 4: 14; no release rules: 2 + 4 = 6.
TEST(VllmProfileRun, SamplerBytesPerLogit) {
  EXPECT_EQ(estimate::VllmSamplerBytesPerLogit(VllmSampler::kTorchSort, 2), 28u);
  EXPECT_EQ(estimate::VllmSamplerBytesPerLogit(VllmSampler::kFlashInfer, 2), 14u);
  EXPECT_EQ(estimate::VllmSamplerBytesPerLogit(VllmSampler::kNone, 2), 6u);
  EXPECT_EQ(estimate::VllmSamplerBytesPerLogit(VllmSampler::kTorchSort, 4), 30u);  // float32
}

// Mixtral-8x7B (hidden 4096, 8 experts of width 14336, 2 per token, SwiGLU) at tp 1, bf16, for
// 8192 tokens: router 8192 x 8 x 2 = 131072; topk weights + ids 16384 rows x 8 = 131072;
// cache13 16384 x max(2 x 14336, 4096) x 2 = 939524096; cache2 16384 x 14336 x 2 = 469762048:
// 1409548288 in all.
TEST(VllmProfileRun, FusedMoeWorkspaceOfMixtral) {
  EXPECT_EQ(estimate::VllmFusedMoeBytes(8192, 8, 2, 14336, 4096, /*gated=*/true, 2), 1409548288u);
  // Not gated (N = the expert width): cache13 16384 x max(14336, 4096) x 2 = 469762048 and
  // cache2 16384 x 14336 x 2 = 469762048: 131072 + 131072 + 939524096 = 939786240.
  EXPECT_EQ(estimate::VllmFusedMoeBytes(8192, 8, 2, 14336, 4096, /*gated=*/false, 2), 939786240u);
}

InferenceOptions TinyProfileRun(std::string_view version) {
  InferenceOptions o = estimate_test::TinyVllmOptions();
  auto release = FindEngineRelease(Engine::kVllm, version);
  EXPECT_TRUE(release);
  o.release = release ? *release : nullptr;
  return o;
}

// The same run under memfit's rules before --engine-version: no release.
InferenceOptions TinyProfileRunWithoutRelease() {
  InferenceOptions o = TinyProfileRun("0.11");
  o.release = nullptr;
  return o;
}

// TinyFp8Moe (tiny_moe_test_util.h: hidden 16, 4 heads of 8 with 2 KV heads, 4 experts of width
// 8, 1 per token, not gated, vocab 128, bf16) through a profile run of 16 tokens and 16 sampled
// rows. The attention: residual + normed input 2 x 16 x 16 x 2 = 1024, qkv 16 x (32 + 32) x 2 =
// 2048, output 16 x 32 x 2 = 1024 and logsumexp 16 x 4 x 4 = 256: 4352. The sampler: hidden
// states of the 16 tokens and of the 16 gathered rows (16 + 16) x 16 x 2 = 1024, plus 16 rows x
// 128 x 28 (vLLM 0.11's sort) = 57344: 58368; vLLM 0.31's FlashInfer: 16 x 128 x 14 = 28672 ->
// 29696. Without a release (memfit's rules before --engine-version): 16 x 16 x 2 + 16 x 128 x 6 =
// 12800.
TEST(VllmProfileRun, SamplerPeakPerRelease) {
  const Model model = TinyFp8Moe();
  auto v11 = EstimateInference(model, TinyProfileRun("0.11"));
  ASSERT_TRUE(v11) << v11.error().message;
  EXPECT_EQ(v11->activation_bytes, 58368u);
  EXPECT_EQ(v11->activation_peak_at, "sampler (profile run of 16 tokens)");
  EXPECT_EQ(EstimateOk(model, TinyProfileRun("0.31")).activation_bytes, 29696u);
  EXPECT_EQ(EstimateOk(model, TinyProfileRunWithoutRelease()).activation_bytes, 12800u);
  // --tp 2: every rank gathers the whole vocabulary before sampling (LogitsProcessor's
  // all-gather), so the sampler's term is the same 58368 on each GPU.
  InferenceOptions tp2 = TinyProfileRun("0.11");
  tp2.tp = 2;
  EXPECT_EQ(EstimateOk(model, tp2).activation_bytes, 58368u);
}

// The same model routing each token to all 4 experts, one sampled row: the MoE layer's working
// set is the peak. Router 16 x 4 x 2 = 128, topk 64 rows x 8 = 512, cache13 64 x max(8, 16) x 2
// = 2048, cache2 64 x 8 x 2 = 1024: 3712, on the residual + normed input 1024: 4736 (above the
// attention's 4352 and the sampler's 17 x 16 x 2 + 128 x 28 = 4128). memfit's rules before
// --engine-version counted the dense MLP of the expert width: 2 x 16 x 8 x 2 + 16 x 4 x 4 + 1024
// = 2048, under the attention.
TEST(VllmProfileRun, FusedMoeWorkspaceIsThePeak) {
  Model model = TinyFp8Moe();
  model.hp.experts_per_token = 4;
  InferenceOptions o = TinyProfileRun("0.11");
  o.max_num_seqs = 1;
  auto e = EstimateInference(model, o);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->activation_bytes, 4736u);
  EXPECT_EQ(e->activation_peak_at, "mlp (profile run of 16 tokens)");
  o.release = nullptr;
  auto old = EstimateInference(model, o);
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(old->activation_bytes, 4352u);
  EXPECT_EQ(old->activation_peak_at, "attention (profile run of 16 tokens)");
}

// A multimodal model: profile_run's encoder outputs, budget x hidden x c, stay in the encoder cache
// through the language model's dummy run. Hand-worked: 8192 tokens x 4096 x 2 = 67108864 (64 MiB);
// the tiny model (a tensor of a vision_tower component stands for the tower): 16 x 16 x 2 = 512
// on the sampler's peak, 29696 + 512 = 30208 (0.31), 58368 + 512 = 58880 (0.11, which pads each
// dummy item to the budget and says so); without release rules nothing.
TEST(VllmProfileRun, EncoderCacheOfAMultimodalModel) {
  EXPECT_EQ(estimate::VllmEncoderCacheBytes(8192, 4096, 2), 67108864u);
  Model model = TinyFp8Moe();
  EXPECT_FALSE(estimate::HasMultimodalEncoder(model));
  model.tensors.back().component = "vision_tower";
  EXPECT_TRUE(estimate::HasMultimodalEncoder(model));
  auto v31 = EstimateInference(model, TinyProfileRun("0.31"));
  ASSERT_TRUE(v31) << v31.error().message;
  EXPECT_EQ(v31->activation_bytes, 30208u);
  EXPECT_EQ(v31->activation_peak_at, "sampler (profile run of 16 tokens) with the encoder cache");
  auto v11 = EstimateInference(model, TinyProfileRun("0.11"));
  ASSERT_TRUE(v11) << v11.error().message;
  EXPECT_EQ(v11->activation_bytes, 58880u);
  bool padded = false;
  for (const auto& a : v11->assumptions) padded = padded || a.find("pads every dummy") != a.npos;
  EXPECT_TRUE(padded);
  EXPECT_EQ(EstimateOk(model, TinyProfileRunWithoutRelease()).activation_bytes, 12800u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
