// `memfit fit` (cli/fit_command.cc) on the tiny local model of command_test_util.h (192 B of
// weights as stored): a verdict per GPU size, the --reserve note, --device-map alone.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/command_test_util.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using cli_test::RunMemfit;

using FitCommandTest = cli_test::TinyModelTest;

TEST_F(FitCommandTest, FitsOnAGpuLargerThanTheWeights) {
  ASSERT_TRUE(RunJson({"fit", dir, "--gpu", "1GiB", "--format", "json"}, "memfit.fit/1"));
  EXPECT_TRUE(cli_test::JsonHas(j, {{"task", "load"},
                                    {"dtype", "as stored"},
                                    {"verdict", "fits"},
                                    {"weight_bytes", 192},
                                    {"gpus_needed", 1}}));
  EXPECT_EQ(j["devices"][0]["label"], "0 (1.00 GiB GPU)");
  // No --reserve on a load: said once on stderr.
  EXPECT_EQ(err, "memfit: no memory kept for the CUDA context (about 0.3-1.3 GiB measured); "
                 "add --reserve 1GiB\n");
  auto reserved = RunMemfit({"fit", dir, "--gpu", "2GiB", "--reserve", "1GiB", "--format", "json"});
  ASSERT_EQ(reserved.code, 0) << reserved.err;
  EXPECT_EQ(reserved.err, "");
}

TEST_F(FitCommandTest, TooSmallAGpuDoesNotFit) {
  // 100 B of GPU and no --ram or --disk: the 192 B cannot all be placed.
  ASSERT_TRUE(RunJson({"fit", dir, "--gpu", "100B", "--format", "json"}, "memfit.fit/1"));
  EXPECT_EQ(j["verdict"], "does not fit");
  EXPECT_GT(j["unplaced_bytes"].get<uint64_t>(), 0u);
  EXPECT_FALSE(j["unplaced"].empty());
}

TEST_F(FitCommandTest, DeviceMapAloneIsOneJsonObject) {
  auto r = RunMemfit({"fit", dir, "--gpu", "1GiB", "--device-map"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_object()) << r.out;
  for (const auto& [module, device] : j.items()) EXPECT_EQ(device, 0) << module;  // all on GPU 0
}

TEST_F(FitCommandTest, WordsOutsideTheirSetsAreOneLineErrors) {
  auto task = RunMemfit({"fit", dir, "--gpu", "1GiB", "--task", "serve"});
  EXPECT_EQ(task.code, 1);
  EXPECT_NE(task.err.find("--task"), std::string::npos) << task.err;
  auto strategy = RunMemfit({"fit", dir, "--gpu", "1GiB", "--strategy", "random"});
  EXPECT_EQ(strategy.code, 1);
  EXPECT_NE(strategy.err.find("--strategy"), std::string::npos) << strategy.err;
  auto gpu = RunMemfit({"fit", dir, "--gpu", "potato"});
  EXPECT_EQ(gpu.code, 1);
  EXPECT_TRUE(gpu.err.starts_with("memfit: error: ")) << gpu.err;
  EXPECT_NE(gpu.err.find("potato"), std::string::npos) << gpu.err;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
