// `memfit inspect` (cli/inspect_command.cc): --depth groups the tiny local model's tensors
// (command_test_util.h), and is checked to 1..16.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/command_test_util.h"

namespace memfit::cli {
namespace {
namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using cli_test::RunMemfit;

using InspectCommandTest = cli_test::TinyModelTest;

TEST_F(InspectCommandTest, DepthGroupsTheTensors) {
  // Depth 1: everything under "model": 3 tensors, 64 parameters, 192 B.
  auto one = RunMemfit({"inspect", dir, "--depth", "1", "--format", "csv"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(one.out, "module,tensors,parameters,bytes\nmodel,3,64,192 B\n");
  // Depth 3 (the default): the two numbered layers merge (2 tensors, 32 parameters, 64 B); the
  // embedding's name is shorter than the depth: it groups under its module.
  auto three = RunMemfit({"inspect", dir, "--format", "csv"});
  ASSERT_EQ(three.code, 0) << three.err;
  EXPECT_EQ(three.out,
            "module,tensors,parameters,bytes\n"
            "model.embed_tokens,1,32,128 B\n"
            "model.layers.*,2,32,64 B\n");
  ASSERT_TRUE(RunJson({"inspect", dir, "--format", "json"}, "memfit.inspect/1"));
  EXPECT_EQ(j["dtypes"], nlohmann::json::parse(R"([
      {"dtype": "BF16", "elements": 32, "bytes": 64},
      {"dtype": "F32", "elements": 32, "bytes": 128}])"));
}

TEST_F(InspectCommandTest, DepthOutsideItsRangeIsOneLineError) {
  for (const char* depth : {"0", "17"}) {
    auto r = RunMemfit({"inspect", dir, "--depth", depth});
    EXPECT_EQ(r.code, 1) << depth;
    EXPECT_NE(r.err.find("--depth"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
