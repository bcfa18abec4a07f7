// The training search (memfit/train_search.h): which combinations exist, their order (the
// ranking in docs/estimates.md, "Training advice") and the first that fits under a judge.

#include "memfit/train_search.h"

#include <gtest/gtest.h>

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(TrainSearchTest, CandidatesAreRankedCheapestFirstAndChangeSomething) {
  TrainOptions base;  // full, AdamW, bf16-mixed, no checkpointing, batch 1
  const auto all = TrainSetupCandidates(base);
  // method 3 x checkpointing 2 x optimizer 2 x precision 2 x batch 1 x offload 2, less the base.
  ASSERT_EQ(all.size(), 3u * 2 * 2 * 2 * 2 - 1);
  // Cost 1 each, fewer changes first: checkpointing and 8-bit AdamW, in dimension order.
  EXPECT_EQ(all[0].flags, "--checkpointing full");
  EXPECT_EQ(all[0].cost, 1);
  EXPECT_EQ(all[0].quality_cost, 0);
  EXPECT_EQ(all[1].flags, "--optimizer adamw-8bit");
  EXPECT_EQ(all[1].quality_cost, 1);
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_LE(all[i - 1].cost, all[i].cost) << all[i].flags;
    EXPECT_FALSE(all[i].changes.empty());
  }
  // The dearest: QLoRA (3) + checkpointing (1) + 8-bit (1) + pure bf16 (2) + offload (3) = 10.
  EXPECT_EQ(all.back().cost, 10);
  EXPECT_EQ(all.back().flags, "--method qlora --checkpointing full --optimizer adamw-8bit "
                              "--precision bf16 --strategy zero2 --offload optimizer");
  EXPECT_EQ(all.back().options.method, TrainMethod::kQlora);
  EXPECT_EQ(all.back().options.strategy, Strategy::kZero2);
}

TEST(TrainSearchTest, SmallerMicroBatchesKeepTheEffectiveBatch) {
  TrainOptions base;
  base.batch = 8;
  base.grad_accum = 2;
  bool seen = false;
  for (const auto& s : TrainSetupCandidates(base)) {
    EXPECT_EQ(s.options.batch * s.options.grad_accum, 16u) << s.flags;
    if (s.flags == "--batch 2 --grad-accum 8") seen = true;
  }
  EXPECT_TRUE(seen);
}

TEST(TrainSearchTest, SettingsAlreadyChosenAreNotOfferedAgain) {
  TrainOptions base;
  base.method = TrainMethod::kQlora;
  base.checkpointing = Checkpointing::kFull;
  base.optimizer = Optimizer::kAdamW8bit;
  base.precision = Precision::kBf16;
  base.offload = Offload::kOptimizer;
  EXPECT_TRUE(TrainSetupCandidates(base).empty());
}

TEST(TrainSearchTest, SearchStopsAtTheFirstSetupThatFits) {
  TrainOptions base;
  // A judge that fits only QLoRA with checkpointing: QLoRA (3) + checkpointing (1) = 4; every
  // cheaper combination is judged first.
  size_t judged = 0;
  auto result = SearchTrainSetup(base, [&](const TrainSetup& s) -> Result<TrainJudgement> {
    ++judged;
    if (s.options.method == TrainMethod::kQlora && s.options.checkpointing == Checkpointing::kFull) {
      return TrainJudgement{Verdict::kFits, 42};
    }
    if (s.options.precision == Precision::kBf16) return MakeError("refused");
    return TrainJudgement{Verdict::kDoesNotFit, 100};
  });
  ASSERT_TRUE(result.setup);
  EXPECT_EQ(result.setup->flags, "--method qlora --checkpointing full");
  EXPECT_EQ(result.judgement.need_bytes, 42u);
  EXPECT_EQ(result.tried, judged);
  auto none = SearchTrainSetup(base, [](const TrainSetup&) -> Result<TrainJudgement> {
    return TrainJudgement{Verdict::kDoesNotFit, 1};
  });
  EXPECT_FALSE(none.setup);
  EXPECT_EQ(none.tried, TrainSetupCandidates(base).size());
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
