// `memfit validate`'s report (render/validation_report.cc) on rows made by hand: one within its
// tolerance, one rough miss, one calibration row, one memfit cannot express.

#include <gtest/gtest.h>

#include <vector>

#include "formats/json.h"
#include "memfit/render_memory.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

constexpr double kGiB = 1073741824.0;

std::vector<RowResult> Rows() {
  std::vector<RowResult> rows(4);
  // 10 GiB measured, 10.5 GiB estimated: +5.0%, within 10%.
  rows[0] = {.id = "a", .model = "m1", .row_class = RowClass::kInference, .expressed = true,
             .measured = 10 * kGiB, .estimate = 10.5 * kGiB, .error = 0.05, .tolerance = 0.10,
             .within = true, .note = "n1"};
  // 4 GiB measured, 3 GiB estimated: -25.0%, outside a rough 15%.
  rows[1] = {.id = "b", .model = "m2", .row_class = RowClass::kTraining, .expressed = true,
             .measured = 4 * kGiB, .estimate = 3 * kGiB, .error = -0.25, .tolerance = 0.15,
             .within = false, .rough = true};
  // The row a default was fitted to: shown, not counted in the summary.
  rows[2] = {.id = "c", .model = "m3", .row_class = RowClass::kTraining, .expressed = true,
             .measured = 2 * kGiB, .estimate = 2.04 * kGiB, .error = 0.02, .tolerance = 0.05,
             .within = true, .calibration = true};
  rows[3] = {.id = "d", .model = "m4", .row_class = RowClass::kLoad, .expressed = false,
             .reason = "no config.json", .measured = 1 * kGiB};
  return rows;
}

TEST(ValidationReportTest, JsonRowsCarryEstimateOrReason) {
  const std::string text = RenderValidation(Rows(), OutputFormat::kJson);
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["schema"], "memfit.validate/1");
  ASSERT_EQ(j["rows"].size(), 4u);
  const auto& a = j["rows"][0];
  EXPECT_EQ(a["id"], "a");
  EXPECT_EQ(a["class"], "inference");
  EXPECT_EQ(a["expressed"], true);
  EXPECT_EQ(a["measured_bytes"].get<double>(), 10 * kGiB);
  EXPECT_EQ(a["estimate_bytes"].get<double>(), 10.5 * kGiB);
  EXPECT_EQ(a["error"].get<double>(), 0.05);
  EXPECT_EQ(a["within"], true);
  EXPECT_EQ(a["note"], "n1");
  EXPECT_FALSE(a.contains("reason"));
  EXPECT_EQ(j["rows"][1]["rough"], true);
  EXPECT_EQ(j["rows"][2]["calibration"], true);
  // Not expressed: the reason, and no estimate, error or verdict.
  const auto& d = j["rows"][3];
  EXPECT_EQ(d["class"], "load");
  EXPECT_EQ(d["expressed"], false);
  EXPECT_EQ(d["reason"], "no config.json");
  EXPECT_FALSE(d.contains("estimate_bytes"));
  EXPECT_FALSE(d.contains("error"));
  EXPECT_FALSE(d.contains("within"));
}

TEST(ValidationReportTest, CsvHasTheExpressedRowsInGiB) {
  // 10.5 GiB -> "10.50 GiB"; 2.04 GiB -> "2.04 GiB"; error x 100 with a sign and one decimal;
  // tolerance x 100 without decimals, "rough " for rough rows.
  EXPECT_EQ(RenderValidation(Rows(), OutputFormat::kCsv),
            "id,model,class,measured,estimate,error,tolerance,status,note\n"
            "a,m1,inference,10.00 GiB,10.50 GiB,+5.0%,10%,ok,n1\n"
            "b,m2,training,4.00 GiB,3.00 GiB,-25.0%,rough 15%,MISS,\n"
            "c,m3,training,2.00 GiB,2.04 GiB,+2.0%,5%,calibration,\n");
}

TEST(ValidationReportTest, MarkdownSummarisesEachClass) {
  const std::string md = RenderValidation(Rows(), OutputFormat::kMarkdown);
  // load: 1 row, none expressed, mean "-". inference: 1 of 1 within, mean |+5%| = 5.0%.
  // training: 2 rows; the calibration row is left out of the counts: 1 counted, 0 within,
  // mean |-25%| = 25.0%.
  EXPECT_NE(md.find("| class | rows | expressed | within tolerance | mean /error/ |\n"),
            std::string::npos)
      << md;  // '|' in a cell is written '/'
  EXPECT_NE(md.find("| load | 1 | 0 | 0 | - |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| inference | 1 | 1 | 1 | 5.0% |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| training | 2 | 1 | 0 | 25.0% |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| d | m4 | load | no config.json |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| b | m2 | training | 4.00 GiB | 3.00 GiB | -25.0% | rough 15% | MISS |  |\n"),
            std::string::npos)
      << md;
}

TEST(ValidationReportTest, TableListsTheRowsItCannotExpress) {
  const std::string table = RenderValidation(Rows(), OutputFormat::kTable);
  EXPECT_TRUE(table.starts_with("id  model      class   measured   estimate   error  tolerance       status  note\n"))
      << table;
  EXPECT_NE(table.find("d      m4   load     no config.json\n"), std::string::npos) << table;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
