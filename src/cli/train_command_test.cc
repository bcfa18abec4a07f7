// `memfit train` (cli/train_command.cc): flags reach the estimate, --seq and --micro-batch are
// the old and the other names of --context and --batch. GPT-2 small from the catalog: 124,439,808
// parameters (transformers' count, tied embedding once).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/command_test_util.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using cli_test::RunMemfit;
using TrainCommandTest = cli_test::Gpt2Test;

TEST_F(TrainCommandTest, FlagsReachTheEstimate) {
  ASSERT_TRUE(RunJson(Gpt2("train", {"--context", "128", "--batch", "2", "--optimizer", "sgd",
                                     "--format", "json"}),
                      "memfit.train/1"));
  EXPECT_TRUE(cli_test::JsonHas(
      j,
      {{"settings", {{"seq", 128}, {"batch", 2}, {"optimizer", "sgd"}}},
       {"trainable_params", 124439808},
       {"frozen_params", 0},
       {"per_gpu", {{"optimizer_states", 0}}}}));  // plain SGD keeps no state
  EXPECT_EQ(err, "");
}

TEST_F(TrainCommandTest, OldAndOtherSpellingsGiveTheSameAnswer) {
  auto now = RunMemfit(Gpt2("train", {"--context", "128", "--batch", "2", "--format", "json"}));
  ASSERT_EQ(now.code, 0) << now.err;
  auto old = RunMemfit(Gpt2("train", {"--seq", "128", "--micro-batch", "2", "--format", "json"}));
  ASSERT_EQ(old.code, 0) << old.err;
  EXPECT_EQ(old.out, now.out);
  EXPECT_EQ(old.err, "memfit: --seq is deprecated: use --context\n");  // --micro-batch is not
}

TEST_F(TrainCommandTest, AWordOutsideItsSetNamesTheFlagAndTheChoices) {
  auto r = RunMemfit(Gpt2("train", {"--method", "dance"}));
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "memfit: error: --method dance: expected one of full, freeze, lora, qlora\n");
  EXPECT_EQ(r.out, "");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
