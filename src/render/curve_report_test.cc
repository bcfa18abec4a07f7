// A context curve rendered as JSON, table rows and lines (render/curve_report.h), on a curve made
// by hand: every label and figure below is derived in a comment.

#include <gtest/gtest.h>

#include "render/curve_report.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;

// Transformers' metric: 4,096 tokens -> 3 GiB, 8,192 -> 5 GiB per GPU. Three GPUs: one that
// holds the whole curve (24 GiB), one that stops at 4,096 tokens, one that holds none (2 GiB).
ContextCurve TotalCurve() {
  ContextCurve c;
  c.metric = "total_per_gpu";
  c.max_context = 8192;
  c.points = {{.context = 4096, .bytes = 3 * kGiB}, {.context = 8192, .bytes = 5 * kGiB}};
  c.limits = {{.gpu = "RTX 4090", .budget_bytes = 24 * kGiB, .longest_context = std::nullopt},
              {.gpu = "4.00 GiB GPU", .budget_bytes = 4 * kGiB, .longest_context = 4096},
              {.gpu = "tiny", .budget_bytes = 2 * kGiB, .longest_context = 0, .note = "weights alone exceed it"}};
  c.assumptions = {"no max_position_embeddings: the curve ends at 8,192"};
  return c;
}

TEST(CurveReportTest, JsonHoldsEveryPointAndLimit) {
  const nlohmann::json j = ContextCurveJson(TotalCurve());
  // The contract in docs/json.md ("curve"): null longest_context = the whole curve fits.
  EXPECT_EQ(j, nlohmann::json::parse(R"({
      "metric": "total_per_gpu", "max_context": 8192,
      "points": [{"context": 4096, "bytes": 3221225472}, {"context": 8192, "bytes": 5368709120}],
      "limits": [
        {"gpu": "RTX 4090", "budget_bytes": 25769803776, "longest_context": null, "note": ""},
        {"gpu": "4.00 GiB GPU", "budget_bytes": 4294967296, "longest_context": 4096, "note": ""},
        {"gpu": "tiny", "budget_bytes": 2147483648, "longest_context": 0,
         "note": "weights alone exceed it"}]})"));
  // 3 GiB = 3 x 2^30 = 3,221,225,472; 5 GiB = 5,368,709,120; 24 GiB = 25,769,803,776.
  EXPECT_TRUE(j["limits"][0]["longest_context"].is_null());
  // The assumptions are not part of the curve object (the callers merge them).
  EXPECT_FALSE(j.contains("assumptions"));
}

TEST(CurveReportTest, RowsNameTheMetricAndTheGroupedContext) {
  const auto rows = ContextCurveRows(TotalCurve());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].first, "total per GPU at 4,096 tokens");
  EXPECT_EQ(rows[0].second, 3 * kGiB);
  EXPECT_EQ(rows[1].first, "total per GPU at 8,192 tokens");
  EXPECT_EQ(rows[1].second, 5 * kGiB);
}

TEST(CurveReportTest, LinesSayEachGpusLongestContext) {
  const auto lines = ContextCurveLines(TotalCurve());
  ASSERT_EQ(lines.size(), 4u);
  // nullopt: the curve's end, 8,192 tokens; a number: grouped; 0: "none", with the note.
  EXPECT_EQ(lines[0], "longest context on RTX 4090 (memory 24.00 GiB): all 8,192 tokens (the curve's end)");
  EXPECT_EQ(lines[1], "longest context on 4.00 GiB GPU (memory 4.00 GiB): 4,096 tokens");
  EXPECT_EQ(lines[2], "longest context on tiny (memory 2.00 GiB): none (weights alone exceed it)");
  EXPECT_EQ(lines[3], "assumption: no max_position_embeddings: the curve ends at 8,192");
}

TEST(CurveReportTest, KvCacheAndLlamaCppMetricsHaveTheirOwnLabels) {
  // vLLM/SGLang: the batch's KV cache against the engine's KV pool.
  ContextCurve kv;
  kv.metric = "kv_cache";
  kv.max_context = 131072;
  kv.points = {{.context = 131072, .bytes = 512 * kMiB}};
  kv.limits = {{.gpu = "H100 SXM", .budget_bytes = 1536 * kMiB, .longest_context = 34941}};
  EXPECT_EQ(ContextCurveRows(kv)[0].first, "kv cache for the batch at 131,072 tokens");
  // 1536 MiB = 1.5 GiB -> "1.50 GiB".
  EXPECT_EQ(ContextCurveLines(kv),
            std::vector<std::string>{"longest context on H100 SXM (KV pool 1.50 GiB): 34,941 tokens"});

  ContextCurve llama;
  llama.metric = "largest_gpu";
  llama.points = {{.context = 256, .bytes = 1000}};
  EXPECT_EQ(ContextCurveRows(llama)[0].first, "largest GPU at 256 tokens");
  EXPECT_TRUE(ContextCurveLines(llama).empty());  // no GPU, no assumption: no line
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
