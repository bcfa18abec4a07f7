#include "memfit/context_curve.h"

#include <gtest/gtest.h>

#include "estimate/tiny_moe_test_util.h"
#include "gguf_models.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using estimate_test::TinyFp8Moe;

// The tiny FP8 MoE (estimate/tiny_moe_test_util.h) under vLLM --tp 2, no fixed overheads (as in
// plan/deploy_test.cc's hand-worked deployment): on a 20000-byte GPU the pool is
// 20000 x 0.9 - 5464 (weights) - 6656 (profile run) = 5880 bytes; one token's KV is 32 bytes
// per GPU and a 16-token block 512, so the pool holds 11 blocks = 176 tokens. The curve's metric
// is the batch's cache, whole blocks: 64 tokens = 4 blocks = 2048, 176 = 5632 <= 5880, 177 =
// 12 blocks = 6144 > 5880. The longest context is 176, found between the points 64 and 256.
InferenceOptions TinyVllm() {
  InferenceOptions o = estimate_test::TinyVllmOptions();
  o.tp = 2;
  o.context_tokens = 64;
  o.batch = 1;
  return o;
}

TEST(ContextCurve, VllmLongestContextIsThePoolInWholeBlocks) {
  Model model = TinyFp8Moe();
  model.hp.max_position_embeddings = 1024;
  auto curve = EstimateContextCurve(model, TinyVllm(), {{"tiny", 20000, 0}, {"big", 1 << 20, 0}});
  ASSERT_TRUE(curve) << curve.error().message;
  EXPECT_EQ(curve->metric, "kv_cache");
  EXPECT_EQ(curve->max_context, 1024u);
  ASSERT_EQ(curve->points.size(), 4u);  // 64 (the request), 256, 512, 1024
  EXPECT_EQ(curve->points[0].context, 64u);
  EXPECT_EQ(curve->points[0].bytes, 2048u);
  EXPECT_EQ(curve->points[1].bytes, 8192u);
  EXPECT_EQ(curve->points[3].bytes, 32768u);
  ASSERT_EQ(curve->limits.size(), 2u);
  EXPECT_EQ(curve->limits[0].budget_bytes, 5880u);
  ASSERT_TRUE(curve->limits[0].longest_context.has_value());
  EXPECT_EQ(*curve->limits[0].longest_context, 176u);
  // A GPU whose pool holds the whole curve: no crossing.
  EXPECT_FALSE(curve->limits[1].longest_context.has_value());
  EXPECT_TRUE(curve->assumptions.empty());
}

// transformers: the metric is the total per GPU; whatever the crossing, the estimate at it fits
// and one token more does not (exact bisection, not interpolation), and a GPU smaller than the
// weights holds no context at all.
TEST(ContextCurve, TransformersCrossingIsExactAndSmallGpusHoldNothing) {
  Model model = TinyFp8Moe();
  model.hp.max_position_embeddings = 0;  // unknown: the curve ends at 131,072, said
  InferenceOptions o;
  o.context_tokens = 100;
  o.overhead.cuda_context_bytes = 0;
  auto at = [&](uint64_t c) {
    InferenceOptions x = o;
    x.context_tokens = c;
    auto e = EstimateInference(model, x);
    EXPECT_TRUE(e);
    return e ? e->total_bytes : 0;
  };
  const uint64_t budget = at(3000);  // a GPU exactly as large as the model at 3,000 tokens
  auto curve = EstimateContextCurve(model, o, {{"exact", budget, 0}, {"small", 100, 0}});
  ASSERT_TRUE(curve) << curve.error().message;
  EXPECT_EQ(curve->metric, "total_per_gpu");
  EXPECT_EQ(curve->max_context, 131072u);
  ASSERT_EQ(curve->assumptions.size(), 1u);
  EXPECT_NE(curve->assumptions[0].find("131072"), std::string::npos);
  for (size_t i = 1; i < curve->points.size(); ++i) {
    EXPECT_GT(curve->points[i].context, curve->points[i - 1].context);
    EXPECT_GE(curve->points[i].bytes, curve->points[i - 1].bytes);
  }
  ASSERT_TRUE(curve->limits[0].longest_context.has_value());
  const uint64_t longest = *curve->limits[0].longest_context;
  EXPECT_GE(longest, 3000u);
  EXPECT_LE(at(longest), budget);
  EXPECT_GT(at(longest + 1), budget);
  ASSERT_TRUE(curve->limits[1].longest_context.has_value());
  EXPECT_EQ(*curve->limits[1].longest_context, 0u);
}

// llama.cpp: the largest GPU with every layer offloaded, against its memory. The tiny GGUF Llama
// (2 layers, hidden 256, F16) has a 4,096-token training context: a GPU that holds it at 2,048
// but not at 4,096 tokens stops in between, exactly where one token more no longer fits.
TEST(ContextCurve, LlamaCppCrossingIsExact) {
  auto model = testing::MakeGgufModel(testing::GgufShape{});
  ASSERT_TRUE(model) << model.error().message;
  LlamaCppOptions o;
  auto at = [&](uint64_t c) {
    LlamaCppOptions x = o;
    x.context_tokens = c;
    x.num_gpus = 1;
    auto e = EstimateLlamaCpp(*model, x);
    EXPECT_TRUE(e);
    uint64_t largest = 0;
    for (const auto& d : e->devices) {
      if (!d.is_host) largest = std::max(largest, d.total());
    }
    return largest;
  };
  const uint64_t budget = (at(2048) + at(4096)) / 2;
  auto curve = EstimateLlamaCppContextCurve(*model, o, {{"half-way", budget, 0}, {"tiny", 1 << 20, 0}});
  ASSERT_TRUE(curve) << curve.error().message;
  EXPECT_EQ(curve->metric, "largest_gpu");
  EXPECT_EQ(curve->max_context, 4096u);
  EXPECT_EQ(curve->points.back().bytes, at(4096));
  ASSERT_TRUE(curve->limits[0].longest_context.has_value());
  const uint64_t longest = *curve->limits[0].longest_context;
  EXPECT_GT(longest, 2048u);
  EXPECT_LT(longest, 4096u);
  EXPECT_LE(at(longest), budget);
  EXPECT_GT(at(longest + 1), budget);
  EXPECT_EQ(curve->limits[1].longest_context, std::optional<uint64_t>(0));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
