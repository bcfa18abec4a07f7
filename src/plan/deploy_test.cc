#include "memfit/deploy.h"

#include <gtest/gtest.h>

#include "estimate/tiny_moe_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using estimate_test::TinyFp8Moe;

// vLLM with no fixed overheads, so the budget is the weights, the profile peak and the KV pool.
InferenceOptions TinyVllm(uint64_t sequences) {
  InferenceOptions o = estimate_test::TinyVllmOptions();
  o.context_tokens = 64;
  o.batch = sequences;
  return o;
}

const DeployGpu kTiny{.name = "tiny", .memory_bytes = 20000};

// TinyFp8Moe (estimate/tiny_moe_test_util.h) with vLLM --tp 2 on two 20000-byte GPUs:
// weights 5464 per GPU (parallel_test.cc). Profile run of 16 tokens: the logits peak,
// 16 x 16 x 2 + 16 x (128 / 2) x (2 + 4) = 6656 (attention 2688, MLP 1536). Budget 20000 x 0.9 =
// 18000, pool 18000 - 5464 - 6656 = 5880; KV per token 1 layer x 1 KV head x (8 + 8) x 2 = 32,
// block of 16 = 512 -> 11 blocks = 176 tokens; a 64-token sequence takes 4 blocks: 2 sequences.
// The longest single sequence: 176 tokens, capped at max_position_embeddings 64.
TEST(Deploy, OneDeploymentByHand) {
  const Model model = TinyFp8Moe();
  DeployPlanner planner(model, TinyVllm(2));
  DeploymentRow row = planner.Evaluate(kTiny, 2, DeployLayout{.tp = 2});
  ASSERT_TRUE(row.runs) << row.refusal;
  EXPECT_EQ(row.weights_per_gpu_bytes, 5464u);
  EXPECT_EQ(row.kv_pool_bytes, 5880u);
  EXPECT_EQ(row.max_sequences, 2u);
  EXPECT_EQ(row.max_context_tokens, 64u);
  EXPECT_TRUE(row.fits);
  // A layout that needs another GPU count is refused, not evaluated.
  DeploymentRow wrong = planner.Evaluate(kTiny, 4, DeployLayout{.tp = 2});
  EXPECT_FALSE(wrong.runs);
}

// On one GPU (tp 1) the weights are 10736 and the logits peak 16 x 16 x 2 + 16 x 128 x 6 = 12800:
// 23536 > 18000, nothing fits. Two GPUs with tp 2 hold 2 sequences (above): the search answers
// with 2 GPUs, and tp 1 x dp 2 (each replica a whole model) does not fit.
TEST(Deploy, SearchFindsTheSmallestDeployment) {
  const Model model = TinyFp8Moe();
  DeployPlanner planner(model, TinyVllm(2));
  DeployRequest request{.inference = TinyVllm(2), .max_gpus = 8, .top = 3};
  auto rows = planner.Search(kTiny, request);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().gpus, 2u);
  EXPECT_TRUE(rows.front().fits);
  EXPECT_EQ(rows.front().max_sequences, 2u);
  for (const auto& r : rows) {
    EXPECT_TRUE(r.fits);
    EXPECT_FALSE(r.layout.tp == 1 && r.layout.dp == 2 && r.gpus == 2) << DeployLayoutName(r.layout);
  }
  EXPECT_EQ(DeployLayoutName(DeployLayout{.tp = 4, .dp = 4, .ep = 4, .dp_attention = true}),
            "tp4 ep4 dp4-attention");
}

// The grid: every catalog GPU at 1, 2, 4, 8. The tiny model fits everywhere, so the first row
// is one GPU of the smallest memory vLLM runs on (no Apple backend); an FP8 checkpoint on a
// V100 (7.0) is refused by vLLM.
TEST(Deploy, GridSortsCheapestFirstAndNamesRefusals) {
  InferenceOptions o = TinyVllm(1);
  const Model model = TinyFp8Moe();
  DeployPlanner planner(model, o);
  const uint64_t counts[] = {1, 2, 4, 8};
  auto rows = planner.Grid(counts);
  ASSERT_EQ(rows.size(), GpuCatalog().size() * 4);
  uint64_t smallest = UINT64_MAX;  // vLLM has no Apple backend: those rows are refused
  for (const auto& g : GpuCatalog()) {
    if (g.vendor != GpuVendor::kApple) smallest = std::min(smallest, MemoryBytes(g));
  }
  EXPECT_TRUE(rows.front().fits);
  EXPECT_EQ(rows.front().gpus, 1u);
  EXPECT_EQ(rows.front().gpu_memory_bytes, smallest);
  bool v100_refused = false;
  for (const auto& r : rows) {
    if (r.gpu.starts_with("V100")) {
      v100_refused = !r.runs && r.refusal.rfind("vllm:", 0) == 0;
      if (!v100_refused) break;
    }
  }
  EXPECT_TRUE(v100_refused);
  for (const auto& r : rows) {
    if (r.gpu == "M2 Ultra") {
      EXPECT_FALSE(r.runs);
    }
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
