// `memfit validate FILE` (cli/validate_command.cc): rows read from a measured.csv, models from
// FILE's folder/models (or --models), each row estimated or said why not.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "cli/command_test_util.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

namespace fs = std::filesystem;
using cli_test::RunMemfit;

constexpr char kHeader[] = "id,model,task,settings,measure,value,unit,source,notes\n";

std::string WriteCsv(const fs::path& dir, const std::string& rows) {
  fs::create_directories(dir);
  std::ofstream(dir / "measured.csv") << kHeader << rows;
  return (dir / "measured.csv").string();
}

TEST(ValidateCommandTest, EachRowEstimatedOrSaidWhyNot) {
  const fs::path dir = fs::path(testing::TempDir()) / "eval";
  const std::string csv = WriteCsv(dir,
                                   "ctx,any/model,context,,nvml_used,1400,MiB,test,\n"
                                   "absent,org/absent,load,dtype=float16,memory_after_load,10,MiB,test,\n"
                                   "odd,org/x,dance,,nvml_used,1,GiB,test,\n");
  nlohmann::json j;
  ASSERT_TRUE(cli_test::RunJson({"validate", csv, "--format", "json"}, "memfit.validate/1", j));
  ASSERT_EQ(j["rows"].size(), 3u);
  // The CUDA context row: memfit's default 1,343 MiB against 1,400 MiB measured,
  // (1,343 - 1,400) / 1,400 = -4.07%, within 5%; it is the calibration row.
  const auto& ctx = j["rows"][0];
  EXPECT_EQ(ctx["class"], "load");
  EXPECT_EQ(ctx["expressed"], true);
  EXPECT_EQ(ctx["calibration"], true);
  EXPECT_EQ(ctx["measured_bytes"].get<double>(), 1400.0 * 1048576);
  EXPECT_EQ(ctx["estimate_bytes"].get<double>(), 1343.0 * 1048576);
  EXPECT_NEAR(ctx["error"].get<double>(), -57.0 / 1400, 1e-12);
  EXPECT_EQ(ctx["within"], true);
  // No config under FILE's folder/models.
  EXPECT_EQ(j["rows"][1]["expressed"], false);
  EXPECT_EQ(j["rows"][1]["reason"], "no config.json for org/absent under " + (dir / "models").string());
  EXPECT_EQ(j["rows"][2]["reason"], "task \"dance\" is not load, inference, train or context");
}

TEST(ValidateCommandTest, ModelsFolderFromTheFlag) {
  const fs::path dir = fs::path(testing::TempDir()) / "eval2";
  const std::string csv = WriteCsv(dir, "absent,org/absent,load,,memory_after_load,10,MiB,test,\n");
  auto r = RunMemfit({"validate", csv, "--models", "/nowhere/models", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["rows"][0]["reason"],
            "no config.json for org/absent under /nowhere/models");
}

TEST(ValidateCommandTest, AnUnreadableFileIsOneErrorLine) {
  auto r = RunMemfit({"validate", "/nowhere/measured.csv"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "memfit: error: /nowhere/measured.csv: cannot open\n");
  auto none = RunMemfit({"validate"});
  EXPECT_EQ(none.code, 2);  // FILE is required
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
