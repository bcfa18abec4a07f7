// `memfit estimate-memory` (cli/estimate_memory_command.cc) on the tiny local model of
// command_test_util.h: 64 parameters, 192 B stored.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/command_test_util.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using cli_test::RunMemfit;

using EstimateMemoryCommandTest = cli_test::TinyModelTest;

TEST_F(EstimateMemoryCommandTest, JsonRowsPerRequestedDtype) {
  ASSERT_TRUE(
      RunJson({"estimate-memory", dir, "--dtypes", "float16", "float32", "--format", "json"},
              "memfit.estimate-memory/1"));
  EXPECT_EQ(j["model"], "tiny");
  EXPECT_EQ(j["parameters"], 64);      // 32 + 16 + 16
  EXPECT_EQ(j["stored_bytes"], 192);   // 128 + 32 + 32
  ASSERT_EQ(j["rows"].size(), 2u);
  // float16: 64 x 2 B = 128 B, AdamW mixed precision 18 B per parameter = 1,152 B;
  // float32: 64 x 4 B = 256 B, 16 B per parameter = 1,024 B.
  EXPECT_EQ(j["rows"][0]["dtype"], "float16");
  EXPECT_EQ(j["rows"][0]["total_bytes"], 128);
  EXPECT_EQ(j["rows"][0]["training_adam_bytes"], 1152);
  EXPECT_EQ(j["rows"][1]["dtype"], "float32");
  EXPECT_EQ(j["rows"][1]["total_bytes"], 256);
  EXPECT_EQ(j["rows"][1]["training_adam_bytes"], 1024);
  EXPECT_EQ(err, "");
}

TEST_F(EstimateMemoryCommandTest, CompatibilityFlagsAreAcceptedAndSaid) {
  auto r = RunMemfit({"estimate-memory", dir, "--dtypes", "int4", "--trust_remote_code",
                      "--format", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  // int4: half a byte per parameter, 32 B; no full training in int4.
  EXPECT_NE(r.out.find("\nint4,32,"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "memfit: --trust_remote_code accepted for compatibility: memfit never runs "
                   "remote code\n");
}

TEST_F(EstimateMemoryCommandTest, AMissingModelIsOneErrorLine) {
  auto r = RunMemfit({"estimate-memory", "no-such-org/no-such-model", "--offline"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(r.err.starts_with("memfit: error: ")) << r.err;
  EXPECT_NE(r.err.find("no-such-org/no-such-model"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.out, "");
  auto dtype = RunMemfit({"estimate-memory", dir, "--dtypes", "float8"});
  EXPECT_EQ(dtype.code, 1);
  EXPECT_NE(dtype.err.find("float8"), std::string::npos) << dtype.err;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
