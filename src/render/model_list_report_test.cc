// `memfit models`: catalog entries rendered from their own totals (render/model_list_report.cc),
// on entries made by hand.

#include <gtest/gtest.h>

#include <vector>

#include "formats/json.h"
#include "memfit/catalog.h"
#include "memfit/render.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// 1,500,000 parameters -> "1.50M"; 3,000,000 B = 2.861 MiB -> "2.86 MiB".
// 2,000 parameters -> "2.00K"; 512 B -> "512 B" (under 1 KiB: whole bytes).
const CatalogEntry kSmall{.id = "org/small", .family = "llama",
                          .description = "a small model, for tests",
                          .parameters = 1500000, .stored_bytes = 3000000};
const CatalogEntry kTiny{.id = "tiny", .family = "bert", .description = "tiny",
                         .parameters = 2000, .stored_bytes = 512};

std::vector<const CatalogEntry*> Entries() { return {&kSmall, &kTiny}; }

TEST(ModelListReportTest, JsonIsAnArrayOfTheEntriesOwnTotals) {
  const std::string text = RenderModelList(Entries(), OutputFormat::kJson);
  ASSERT_TRUE(text.ends_with("}\n]\n")) << text;
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j, nlohmann::json::parse(R"([
      {"id": "org/small", "family": "llama", "description": "a small model, for tests",
       "parameters": 1500000, "stored_bytes": 3000000},
      {"id": "tiny", "family": "bert", "description": "tiny", "parameters": 2000,
       "stored_bytes": 512}])"));
}

TEST(ModelListReportTest, CsvQuotesADescriptionWithAComma) {
  EXPECT_EQ(RenderModelList(Entries(), OutputFormat::kCsv),
            "id,family,parameters,stored,description\n"
            "org/small,llama,1.50M,2.86 MiB,\"a small model, for tests\"\n"
            "tiny,bert,2.00K,512 B,tiny\n");
}

TEST(ModelListReportTest, MarkdownAndTable) {
  EXPECT_EQ(RenderModelList(Entries(), OutputFormat::kMarkdown),
            "| id | family | parameters | stored | description |\n"
            "|---|---:|---:|---:|---:|\n"
            "| org/small | llama | 1.50M | 2.86 MiB | a small model, for tests |\n"
            "| tiny | bert | 2.00K | 512 B | tiny |\n");
  // Plain table: id left-aligned to 9 ("org/small"), the others right-aligned to their widest
  // cell ("parameters" 10, "2.86 MiB" 8, the description 24), two spaces apart.
  const std::string table = RenderModelList(Entries(), OutputFormat::kTable);
  EXPECT_NE(table.find("tiny         bert       2.00K     512 B                      tiny\n"),
            std::string::npos)
      << table;
  EXPECT_TRUE(table.starts_with("id         family  parameters    stored               description\n"))
      << table;
}

TEST(ModelListReportTest, NoEntriesGiveAnEmptyArrayOrJustTheHeader) {
  EXPECT_EQ(RenderModelList({}, OutputFormat::kJson), "[]\n");
  EXPECT_EQ(RenderModelList({}, OutputFormat::kCsv), "id,family,parameters,stored,description\n");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
