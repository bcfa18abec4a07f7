// Per-family prefill terms of transformers' inference forward (src/estimate/prefill_terms.cc),
// at a size validation/results does not cover: 4 sequences x 2,048 tokens in bfloat16.

#include <gtest/gtest.h>

#include "estimate/hand_count_test_util.h"
#include "estimate/prefill_terms.h"
#include "memfit/estimate_inference.h"
#include "model/arch/arch_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// GPT-NeoX shape small enough to count by hand: 2 layers, hidden 32, 4 heads of 8, MLP 64,
// vocab 100 (untied).
nlohmann::json TinyNeox() {
  // GPT-NeoX has no KV heads of its own.
  return estimate_test::HandCountConfig("gpt_neox", "GPTNeoXForCausalLM",
                                        {{"num_key_value_heads", nullptr}, {"rotary_pct", 0.25}});
}

InferenceEstimate Estimate(const Model& model, uint64_t batch, uint64_t context,
                           AttnImpl attn = AttnImpl::kEager, Dtype dtype = Dtype::kBF16) {
  return estimate_test::EstimateOk(model,
                                   estimate_test::HandCountOptions(batch, context, dtype, attn));
}

Model Renamed(const Model& model, std::string type) {
  Model m = model;
  m.model_type = std::move(type);
  return m;
}

// GPT-NeoX's eager attention softmaxes in the model dtype: 2 x 2 B per score, not Llama's
// 2 + 8. Batch 4 x 2,048 tokens (T = 8,192), bfloat16, at layer 1's attention:
//   residual + normed input      2 x 8,192 x 32 x 2      =   1,048,576
//   fused qkv                    8,192 x 96 x 2          =   1,572,864
//   rotated q and k beside it    8,192 x (32 + 32) x 2   =   1,048,576
//   scores                       4 x 4 x 2,048^2 x 4     = 268,435,456
//   4-D causal mask              4 x 2,048^2 x 2         =  33,554,432
//   the output and its contiguous() copy, the masked scores still referenced
//                                2 x 8,192 x 32 x 2      =   1,048,576
//   inputs_embeds, kept          8,192 x 32 x 2          =     524,288
//   layer 0's cache pins its qkv output beyond its K and V (GPT-NeoX's values are views of it,
//   the keys rotated copies)     8,192 x (32 + 32) x 2   =   1,048,576
//   layer 0's cache              8,192 x 64 x 2          =   1,048,576
//                                                          = 309,329,920
// less the whole cache (2 x 1,048,576; layer 1's entries are its k and v above): 307,232,768.
// (Llama's c + 8 = 10 B per score would give 671,088,640 for the scores alone.)
TEST(InferencePrefillTerms, GptNeoxSoftmaxInModelDtype) {
  auto model = arch::testing::BuildJson(TinyNeox());
  ASSERT_TRUE(model) << model.error().message;
  const InferenceEstimate e = Estimate(*model, 4, 2048);
  EXPECT_EQ(e.activation_peak_at, "attention scores");
  EXPECT_EQ(e.activation_bytes, 307232768u);
}

// The other families against the same layers under a Llama-style type (c + 8 = 10 B per score
// in bfloat16, plus the 4-D mask), per (batch, head, query, key): 4 x 4 x 2,048^2 = 67,108,864
// scores, 16,777,216 mask elements. GPT-2 and BLOOM also keep layer 0's queries' part of the
// fused projection at layer 1's attention: 8,192 x 32 x 2 = 524,288, and not inputs_embeds
// (their first hidden state is a new tensor), which the Llama-style class keeps: 524,288.
// Falcon and GPT-J keep the projections' q and k beside the rotated copies: 8,192 x 64 x 2 =
// 1,048,576.
TEST(InferencePrefillTerms, EagerScoresPerFamily) {
  auto model = arch::testing::BuildJson(TinyNeox());
  ASSERT_TRUE(model) << model.error().message;
  const uint64_t llama = Estimate(Renamed(*model, "llama_like"), 4, 2048).activation_bytes;
  const uint64_t scores = 67108864, mask = 16777216;
  // Falcon: the scores, their sum with the mask and the softmax output in bf16: 3 x 2 = 6 B.
  EXPECT_EQ(Estimate(Renamed(*model, "falcon"), 4, 2048).activation_bytes,
            llama - scores * (10 - 6) + 1048576);
  // BLOOM: the baddbmm output and its masked copy (2 x 2) + the float32 copy and output (8).
  EXPECT_EQ(Estimate(Renamed(*model, "bloom"), 4, 2048).activation_bytes,
            llama + scores * (12 - 10) + 524288 - 524288);
  // GPT-J: float32 scores whatever the dtype, two at a time: 8 B.
  EXPECT_EQ(Estimate(Renamed(*model, "gptj"), 4, 2048).activation_bytes,
            llama - scores * (10 - 8) + 1048576);
  // GPT-2: 2 x 2 B, and a (batch, 1, 1, k) padding mask instead of the 4-D causal one.
  EXPECT_EQ(Estimate(Renamed(*model, "gpt2"), 4, 2048).activation_bytes,
            llama - scores * (10 - 4) - mask * 2 + 524288 - 524288);
  // float32: BLOOM's upcast is a no-op, its three copies 3 x 4 = 12 B against Llama's 8; the
  // pinned queries' part and inputs_embeds are 1,048,576 each.
  const uint64_t llama32 =
      Estimate(Renamed(*model, "llama_like"), 4, 2048, AttnImpl::kEager, Dtype::kF32)
          .activation_bytes;
  EXPECT_EQ(Estimate(Renamed(*model, "bloom"), 4, 2048, AttnImpl::kEager, Dtype::kF32)
                .activation_bytes,
            llama32 + scores * (12 - 8) + 1048576 - 1048576);
}

// GPT-2's cache holds views of c_attn's output (3 x hidden per token, counted as 2 x hidden)
// until the first decode step, through the logits. 2 layers, hidden 32, 4 heads, MLP 128,
// vocab 1,000, bfloat16, SDPA, 4 x 2,048 tokens (T = 8,192), every token's logits (GPT-2 has no
// num_logits_to_keep):
//   last hidden state            8,192 x 32 x 2          =    524,288
//   logits                       8,192 x 1,000 x 2       = 16,384,000
//   generate()'s float32 row     4 x 1,000 x 4           =     16,000
//   both layers' queries' part   2 x 8,192 x 32 x 2      =  1,048,576
//                                                          = 17,972,864 at the logits
// beside the whole cache, which is complete there. (The first decode step's torch.cat of one
// layer's K/V, 8,192 x 64 x 2, needs less.)
TEST(InferencePrefillTerms, FusedQkvViewsPinnedUntilTheFirstDecodeStep) {
  auto model = arch::testing::BuildJson(
      {{"model_type", "gpt2"}, {"architectures", {"GPT2LMHeadModel"}}, {"vocab_size", 1000},
       {"n_embd", 32}, {"n_layer", 2}, {"n_head", 4}, {"n_positions", 4096},
       {"torch_dtype", "bfloat16"}});
  ASSERT_TRUE(model) << model.error().message;
  const InferenceEstimate e = Estimate(*model, 4, 2048, AttnImpl::kSdpa);
  EXPECT_EQ(e.activation_peak_at, "logits");
  EXPECT_EQ(e.activation_bytes, 17972864u);
  // Phi-3's rotated keys are copies, its values views: the queries' and the keys' parts
  // (4 heads x 8 + 2 KV heads x 8 = 48 per token and layer) stay pinned.
  LayerInfo gqa;
  gqa.num_heads = 4;
  gqa.num_kv_heads = 2;
  gqa.head_dim_k = gqa.head_dim_v = 8;
  EXPECT_EQ(estimate::PinnedProjectionElements("phi3", gqa, 1), 48u);
  EXPECT_EQ(estimate::PinnedProjectionElements("llama", gqa, 1), 0u);
}

// GPT-J's forward returns `self.lm_head(hidden_states).to(torch.float32)` for every prompt token
// (no num_logits_to_keep): in bfloat16 both copies are alive at the upcast. 2 layers, hidden 32,
// 4 heads, MLP 128, vocab 1,000, SDPA, 4 x 2,048 tokens (T = 8,192):
//   last hidden state            8,192 x 32 x 2          =    524,288
//   logits, bf16 + float32       8,192 x 1,000 x (2 + 4) = 49,152,000
//   inputs_embeds, kept          8,192 x 32 x 2          =    524,288
//                                                          = 50,200,576 at the logits, beside
// the whole cache (the model dtype only, as GPT-2's class, would give 16,924,288 + 524,288).
// In float32 the upcast is a no-op: 8,192 x 32 x 4 + 8,192 x 1,000 x 4 + generate()'s clone of
// the last rows 4 x 1,000 x 4 = 33,832,576, + inputs_embeds 8,192 x 32 x 4 = 1,048,576:
// 34,881,152.
TEST(InferencePrefillTerms, GptjUpcastsEveryLogit) {
  auto model = arch::testing::BuildJson(
      {{"model_type", "gptj"}, {"architectures", {"GPTJForCausalLM"}}, {"vocab_size", 1000},
       {"n_embd", 32}, {"n_layer", 2}, {"n_head", 4}, {"rotary_dim", 4}, {"n_positions", 4096},
       {"torch_dtype", "bfloat16"}});
  ASSERT_TRUE(model) << model.error().message;
  const InferenceEstimate e = Estimate(*model, 4, 2048, AttnImpl::kSdpa);
  EXPECT_EQ(e.activation_peak_at, "logits");
  EXPECT_EQ(e.activation_bytes, 50200576u);
  EXPECT_EQ(Estimate(*model, 4, 2048, AttnImpl::kSdpa, Dtype::kF32).activation_bytes, 34881152u);
  bool said = false;
  for (const auto& a : e.assumptions) said = said || a.find("upcast to float32") != a.npos;
  EXPECT_TRUE(said);
}

// T5's eager attention (modeling_t5.py T5Attention): a (batch, heads, q, k) position bias in
// the model dtype reused by every layer instead of a 4-D mask; the scores, their float32 copy
// and output in 16-bit (2 + 8 B); in float32 the scores and output (8 B) with, at the value
// matmul, its output and the query's contiguous copy (measured: the s-t5 rows).
TEST(InferencePrefillTerms, T5KeepsAPositionBiasPerHead) {
  const estimate::EagerScores bf16 = estimate::EagerScoresFor("t5", 2);
  EXPECT_EQ(bf16.bytes_per_score, 10u);
  EXPECT_FALSE(bf16.float_mask);
  EXPECT_TRUE(bf16.head_bias);
  EXPECT_EQ(bf16.outputs, 0u);
  const estimate::EagerScores fp32 = estimate::EagerScoresFor("t5", 4);
  EXPECT_EQ(fp32.bytes_per_score, 8u);
  EXPECT_EQ(fp32.outputs, 2u);
  EXPECT_FALSE(estimate::EagerScoresFor("llama", 2).head_bias);
}

// generate() with --new-tokens: the prefill runs over the prompt (context - new tokens), the cache
// ends at the whole context. The tiny GPT-NeoX, 4 x 2,048 tokens, eager, bfloat16: its cache per
// layer at 2,048 is 8,192 x 64 x 2 = 1,048,576 B (2,097,152 for both layers).
TEST(InferencePrefillTerms, NewTokensPrefillThePromptAndEndWithTheWholeCache) {
  auto model = arch::testing::BuildJson(TinyNeox());
  ASSERT_TRUE(model) << model.error().message;
  auto with_new = [&](uint64_t context, uint64_t new_tokens) {
    InferenceOptions o =
        estimate_test::HandCountOptions(4, context, Dtype::kBF16, AttnImpl::kEager);
    o.new_tokens = new_tokens;
    return estimate_test::EstimateOk(*model, o);
  };
  const InferenceEstimate whole = with_new(2048, 0);
  const InferenceEstimate half = with_new(2048, 1024);
  const InferenceEstimate prompt = with_new(1024, 0);
  EXPECT_EQ(whole.kv_cache_bytes, 2097152u);
  EXPECT_EQ(half.kv_cache_bytes, 2097152u);  // the cache at the end: the whole context
  // The prefill of 1,024 tokens peaks as a 1,024-token context does (its scores a quarter of
  // 2,048's), whatever comes after it: the same bytes allocated at the peak.
  EXPECT_EQ(half.activation_bytes + half.kv_cache_bytes,
            prompt.activation_bytes + prompt.kv_cache_bytes);
  EXPECT_EQ(half.activation_peak_at, prompt.activation_peak_at);
  EXPECT_LT(half.total_bytes, whole.total_bytes);
  // A one-token prompt and 2,047 new tokens: the last decode step holds the whole cache and one
  // layer's K/V growing by torch.cat, 1,048,576 B beyond it.
  const InferenceEstimate decode = with_new(2048, 2047);
  EXPECT_EQ(decode.activation_bytes, 1048576u);
  EXPECT_EQ(decode.activation_peak_at, "the last decode step's cache growth");
  // More new tokens than the context leaves a one-token prompt (the request layer refuses it).
  EXPECT_EQ(with_new(2048, 5000).activation_bytes, 1048576u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
