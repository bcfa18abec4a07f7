// `memfit gpus` (cli/gpus_command.cc): the catalog filtered by --vendor and --min-memory.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/command_test_util.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using cli_test::RunMemfit;

TEST(GpusCommandTest, FiltersByVendorAndMemory) {
  auto apple = RunMemfit({"gpus", "--vendor", "Apple", "--format", "json"});  // any case
  ASSERT_EQ(apple.code, 0) << apple.err;
  const auto j = nlohmann::json::parse(apple.out);
  EXPECT_EQ(j["schema"], "memfit.gpus/1");
  ASSERT_FALSE(j["gpus"].empty());
  for (const auto& g : j["gpus"]) EXPECT_EQ(g["vendor"], "apple") << g.dump();

  // 141 GB (binary) = 151,397,597,184 B: the H200's memory; nothing smaller passes.
  auto big = RunMemfit({"gpus", "--min-memory", "141GiB", "--format", "json"});
  ASSERT_EQ(big.code, 0) << big.err;
  bool h200 = false;
  const auto large = nlohmann::json::parse(big.out);
  for (const auto& g : large["gpus"]) {
    EXPECT_GE(g["memory_bytes"].get<uint64_t>(), 151397597184u) << g.dump();
    h200 = h200 || g["name"] == "H200 SXM";
  }
  EXPECT_TRUE(h200) << big.out;
}

TEST(GpusCommandTest, NothingMatchingIsAnEmptyListAndANote) {
  auto none = RunMemfit({"gpus", "--min-memory", "1TiB", "--vendor", "intel", "--format", "csv"});
  EXPECT_EQ(none.code, 0);
  EXPECT_EQ(none.out, "name,vendor,memory,bandwidth GB/s,bf16 dense TFLOPS,type,source\n");
  EXPECT_EQ(none.err, "memfit: no GPU in the catalog matches these filters\n");
}

TEST(GpusCommandTest, BadWordsNameTheFlag) {
  auto size = RunMemfit({"gpus", "--min-memory", "lots"});
  EXPECT_EQ(size.code, 1);
  EXPECT_TRUE(size.err.starts_with("memfit: error: --min-memory")) << size.err;
  EXPECT_EQ(std::count(size.err.begin(), size.err.end(), '\n'), 1) << size.err;
  auto format = RunMemfit({"gpus", "--format", "yaml"});
  EXPECT_EQ(format.code, 1);  // a refused value, like every other: one line, exit 1
  EXPECT_NE(format.err.find("--format"), std::string::npos) << format.err;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
