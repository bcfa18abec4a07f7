// The accuracy bands every estimate carries (memfit/accuracy.h) are data generated from the
// repository's measured rows: this test runs `memfit validate` over validation/results/*.csv,
// recomputes each class's lowest and highest error and row count, and fails when the committed
// src/estimate/accuracy_bands.inc differs. MEMFIT_UPDATE_ACCURACY_BANDS=1 rewrites it (then
// rebuild, so the binary carries the new table).

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "memfit/accuracy.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

struct Band {
  double min_error = 0, max_error = 0;
  uint64_t rows = 0;
};

// validate's row classes -> the estimate classes they measure.
const std::map<std::string, std::string>& ClassEnums() {
  static const std::map<std::string, std::string> kEnums = {
      {"load", "kWeights"}, {"inference", "kInference"}, {"training", "kTraining"}};
  return kEnums;
}

// The .inc text for the bands of every CSV in validation/results (expressed rows, calibration
// rows left out), in class order.
std::string GenerateBands() {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(MEMFIT_SOURCE_DIR) / "validation" / "results";
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  EXPECT_FALSE(files.empty());
  std::map<std::string, Band> bands;
  for (const auto& file : files) {
    auto r = testing::RunMemfit({"validate", file.string(), "--format", "json"});
    EXPECT_EQ(r.code, 0) << file << ": " << r.err;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << file;
    if (j.is_discarded()) continue;
    for (const auto& row : j["rows"]) {
      if (!row.value("expressed", false) || row.value("calibration", false)) continue;
      const std::string cls = row.value("class", "");
      EXPECT_TRUE(ClassEnums().count(cls)) << cls;
      const double error = row.value("error", 0.0);
      Band& b = bands[cls];
      b.min_error = b.rows ? std::min(b.min_error, error) : error;
      b.max_error = b.rows ? std::max(b.max_error, error) : error;
      ++b.rows;
    }
  }
  std::string out =
      "// Generated from validation/results/*.csv by tests/accuracy_bands_test.cc; do not edit.\n"
      "// Regenerate: MEMFIT_UPDATE_ACCURACY_BANDS=1 build/memfit_tests "
      "--gtest_filter='AccuracyBands*'\n";
  for (const char* cls : {"load", "inference", "training"}) {
    auto it = bands.find(cls);
    if (it == bands.end()) continue;
    out += fmt::format("{{AccuracyClass::{}, {:.6f}, {:.6f}, {}}},\n", ClassEnums().at(cls),
                       it->second.min_error, it->second.max_error, it->second.rows);
  }
  return out;
}

TEST(AccuracyBands, CommittedTableMatchesValidationResults) {
  const std::string path = std::string(MEMFIT_SOURCE_DIR) + "/src/estimate/accuracy_bands.inc";
  const std::string generated = GenerateBands();
  if (const char* update = std::getenv("MEMFIT_UPDATE_ACCURACY_BANDS"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << generated;
    GTEST_SKIP() << "wrote " << path << ": rebuild memfit";
  }
  auto committed = testing::ReadFile(path);
  ASSERT_TRUE(committed.has_value()) << path;
  EXPECT_EQ(*committed, generated)
      << "src/estimate/accuracy_bands.inc is stale: run MEMFIT_UPDATE_ACCURACY_BANDS=1 "
         "build/memfit_tests --gtest_filter='AccuracyBands*' and rebuild";
}

// The compiled table is the committed one: each measured class has rows and a band that holds
// zero error or straddles it sensibly (min <= max); unmeasured classes say so.
TEST(AccuracyBands, ClassesAndLines) {
  for (AccuracyClass c : {AccuracyClass::kWeights, AccuracyClass::kInference,
                          AccuracyClass::kTraining}) {
    AccuracyBand b = AccuracyFor(c);
    EXPECT_GT(b.rows, 0u) << AccuracyClassName(c);
    EXPECT_LE(b.min_error, b.max_error);
    EXPECT_EQ(b.source, "validation/results");
  }
  EXPECT_EQ(AccuracyFor(AccuracyClass::kServing).rows, 0u);
  EXPECT_EQ(AccuracyLine(AccuracyFor(AccuracyClass::kServing)), "accuracy (serving): not measured");
  EXPECT_EQ(AccuracyLine(AccuracyFor(AccuracyClass::kLlamaCpp)),
            "accuracy (llama.cpp): not measured");
  // -0.0123 .. +0.0241 over 140 rows, one decimal of a percent.
  AccuracyBand made;
  made.accuracy_class = AccuracyClass::kTraining;
  made.min_error = -0.0123;
  made.max_error = 0.0241;
  made.rows = 140;
  made.source = "validation/results";
  EXPECT_EQ(AccuracyLine(made),
            "accuracy (training): CPU-measured -1.2% .. +2.4% over 140 rows (validation/results)");
  EXPECT_EQ(AccuracyClassFor(Engine::kTransformers), AccuracyClass::kInference);
  EXPECT_EQ(AccuracyClassFor(Engine::kVllm), AccuracyClass::kServing);
  EXPECT_EQ(AccuracyClassFor(Engine::kLlamaCpp), AccuracyClass::kLlamaCpp);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
