// `memfit train` (cli/train_command.cc): flags reach the estimate, --seq and --micro-batch are
// the old and the other names of --context and --batch. GPT-2 small from the catalog: 124,439,808
// parameters (transformers' count, tied embedding once).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/command_test_util.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using cli_test::RunMemfit;

TEST(TrainCommandTest, FlagsReachTheEstimate) {
  cli_test::OfflineEnv env;
  auto r = RunMemfit({"train", "openai-community/gpt2", "--offline", "--context", "128",
                      "--batch", "2", "--optimizer", "sgd", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "memfit.train/1");
  EXPECT_EQ(j["settings"]["seq"], 128);
  EXPECT_EQ(j["settings"]["batch"], 2);
  EXPECT_EQ(j["settings"]["optimizer"], "sgd");
  EXPECT_EQ(j["trainable_params"], 124439808);
  EXPECT_EQ(j["frozen_params"], 0);
  // Plain SGD keeps no state.
  EXPECT_EQ(j["per_gpu"]["optimizer_states"], 0);
  EXPECT_EQ(r.err, "");
}

TEST(TrainCommandTest, OldAndOtherSpellingsGiveTheSameAnswer) {
  cli_test::OfflineEnv env;
  auto now = RunMemfit({"train", "openai-community/gpt2", "--offline", "--context", "128",
                        "--batch", "2", "--format", "json"});
  ASSERT_EQ(now.code, 0) << now.err;
  auto old = RunMemfit({"train", "openai-community/gpt2", "--offline", "--seq", "128",
                        "--micro-batch", "2", "--format", "json"});
  ASSERT_EQ(old.code, 0) << old.err;
  EXPECT_EQ(old.out, now.out);
  EXPECT_EQ(old.err, "memfit: --seq is deprecated: use --context\n");  // --micro-batch is not
}

TEST(TrainCommandTest, NoContextMeansTheModelsOwnCappedAt2048) {
  cli_test::OfflineEnv env;
  auto r = RunMemfit({"train", "openai-community/gpt2", "--offline", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["settings"]["seq"], 1024);  // min(1,024, 2,048)
}

TEST(TrainCommandTest, AWordOutsideItsSetNamesTheFlagAndTheChoices) {
  cli_test::OfflineEnv env;
  auto r = RunMemfit({"train", "openai-community/gpt2", "--offline", "--method", "dance"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "memfit: error: --method dance: expected one of full, freeze, lora, qlora\n");
  EXPECT_EQ(r.out, "");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
