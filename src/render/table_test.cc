// The generic table renderers (src/render/table.cc) and ParseOutputFormat.

#include <gtest/gtest.h>

#include "memfit/render.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(RenderAsciiTableTest, CentersLikePythonsStrCenter) {
  // Python: "ab".center(5) == "  ab " (odd margin, odd width: the extra space goes left),
  // "ab".center(6) == "  ab  ", "abc".center(6) == " abc  ".
  const std::string table = RenderAsciiTable("T", {"dtype", "Size"}, {{"ab", "1.0 KB"}});
  EXPECT_EQ(table,
            "┌────────────┐\n"
            "│     T      │\n"
            "├─────┬──────┤\n"
            "│dtype│ Size │\n"
            "├─────┼──────┤\n"
            "│  ab │1.0 KB│\n"
            "└─────┴──────┘");
}

TEST(RenderAsciiTableTest, ALongTitleWidensTheLastColumn) {
  const std::string table = RenderAsciiTable("Memory Usage for loading `m`", {"a", "b"}, {{"1", "2"}});
  // Every line has the same display width.
  size_t width = 0;
  size_t start = 0;
  for (size_t end; start <= table.size(); start = end + 1) {
    end = table.find('\n', start);
    if (end == std::string::npos) end = table.size();
    std::string_view line(table.data() + start, end - start);
    size_t w = 0;
    for (unsigned char c : line) w += (c & 0xC0) != 0x80;
    if (width == 0) width = w;
    EXPECT_EQ(w, width) << line;
  }
  EXPECT_NE(table.find("Memory Usage for loading `m`"), std::string::npos);
}

TEST(RenderPlainTableTest, FirstColumnLeftOthersRightAndNoTrailingSpaces) {
  EXPECT_EQ(RenderPlainTable({"dtype", "Load"}, {{"float32", "1.00 GiB"}, {"int4", "128 B"}}),
            "dtype        Load\n"
            "─────────────────\n"
            "float32  1.00 GiB\n"
            "int4        128 B\n");
  // A short row is padded with empty cells.
  EXPECT_EQ(RenderPlainTable({"a", "b"}, {{"x"}}), "a  b\n────\nx\n");
}

TEST(RenderPlainTableTest, AnAbsurdCellOverflowsInsteadOfWideningEveryRow) {
  const std::string long_name(1000, 'x');
  const std::string table = RenderPlainTable({"name", "n"}, {{long_name, "1"}, {"y", "2"}});
  // The short row is padded to the 160-column cap, not to 1,000.
  EXPECT_NE(table.find("y" + std::string(159, ' ') + "  2\n"), std::string::npos);
}

TEST(RenderCsvTest, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(RenderCsv({"name", "bytes"}, {{"plain", "1"}, {"a,b", "say \"hi\""}, {"two\nlines", ""}}),
            "name,bytes\n"
            "plain,1\n"
            "\"a,b\",\"say \"\"hi\"\"\"\n"
            "\"two\nlines\",\n");
}

TEST(RenderMarkdownTableTest, RightAlignsNumbersAndReplacesPipes) {
  EXPECT_EQ(RenderMarkdownTable({"dtype", "Load"}, {{"a|b", "1 B"}}),
            "| dtype | Load |\n"
            "|---|---:|\n"
            "| a/b | 1 B |\n");
}

TEST(ParseOutputFormatTest, NamesAndAliases) {
  EXPECT_EQ(*ParseOutputFormat("table"), OutputFormat::kTable);
  EXPECT_EQ(*ParseOutputFormat("text"), OutputFormat::kTable);
  EXPECT_EQ(*ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_EQ(*ParseOutputFormat("csv"), OutputFormat::kCsv);
  EXPECT_EQ(*ParseOutputFormat("md"), OutputFormat::kMarkdown);
  auto bad = ParseOutputFormat("yaml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "unknown format \"yaml\" (expected table, json, csv or markdown)");
}

TEST(RenderPlainTableTest, FitsTheWidthByLeavingOutThenCutting) {
  // Widths: "name" 4, "note" 30, "size" 4: 4 + 2 + 30 + 2 + 4 = 42 columns.
  const std::vector<std::string> headers = {"name", "note", "size"};
  const std::vector<std::vector<std::string>> rows = {
      {"abcd", "a note of exactly thirty chars", "1 B"}};
  // No limit, or --wide, or wide enough: the plain table.
  EXPECT_EQ(RenderPlainTable(headers, rows, TextLayout{}), RenderPlainTable(headers, rows));
  EXPECT_EQ(RenderPlainTable(headers, rows, TextLayout{.width = 20, .wide = true}),
            RenderPlainTable(headers, rows));
  EXPECT_EQ(RenderPlainTable(headers, rows, TextLayout{.width = 42}), RenderPlainTable(headers, rows));
  // 36 columns, "size" optional: left out (36 = 4 + 2 + 30), said under the table.
  EXPECT_EQ(RenderPlainTable(headers, rows, TextLayout{.width = 36}, {2}),
            RenderPlainTable({"name", "note"}, {{"abcd", "a note of exactly thirty chars"}}) +
                "(left out: size; --wide shows all)\n");
  // 30 columns, nothing optional: the widest column (note, 30) is cut by the 12 over, to 18
  // display columns, the last of them "…".
  EXPECT_EQ(RenderPlainTable(headers, rows, TextLayout{.width = 30}),
            RenderPlainTable(headers, {{"abcd", "a note of exactly…", "1 B"}}) +
                "(cut to fit; --wide shows all)\n");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
