// estimate-memory's renderers over a hand-made model whose numbers can be checked by hand:
// JSON (the contract in docs/json.md), CSV and Markdown.

#include <gtest/gtest.h>

#include "memfit/accuracy.h"
#include "memfit/estimate_load.h"
#include "formats/json.h"
#include "render/report_json.h"
#include "memfit/render.h"
#include "model/tensor_test_util.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// embed (4x2 F32: 32 B) and two layers (2x2 BF16: 8 B each): blocks embed, layers.0, layers.1.
Model Tiny() {
  return testing::ToyModel("tiny", "ToyForCausalLM",
                           {testing::StoredTensor("embed.weight", {4, 2}, Dtype::kF32),
                            testing::StoredTensor("layers.0.w", {2, 2}, Dtype::kBF16),
                            testing::StoredTensor("layers.1.w", {2, 2}, Dtype::kBF16)});
}

TEST(LoadReportTest, JsonHoldsTheHandCheckedNumbers) {
  const Model model = Tiny();
  const LoadEstimate e =
      EstimateLoad(model, {.dtypes = {LoadDtype::kFloat16, LoadDtype::kInt4}});
  const nlohmann::json j = LoadEstimateJson(model, e);
  EXPECT_EQ(j["schema"], "memfit.estimate-memory/1");
  EXPECT_EQ(j["model"], "tiny");
  EXPECT_EQ(j["parameters"], 16);
  EXPECT_EQ(j["stored_bytes"], 48);
  EXPECT_EQ(j["resident_bytes"], 48);
  EXPECT_EQ(j["buffer_bytes"], 0);
  EXPECT_TRUE(j["index_total_size"].is_null());
  EXPECT_EQ(j["stored_dtypes"], nlohmann::json::parse(
                                    R"([{"dtype": "F32", "bytes": 32}, {"dtype": "BF16", "bytes": 16}])"));
  EXPECT_EQ(j["largest_block"], nlohmann::json::parse(R"({"name": "embed", "bytes": 32})"));
  // float16: 16 elements x 2 B; the largest block is embed's 8 elements; AdamW mixed precision 18
  // B per parameter. int4: half a byte per element, no full training.
  EXPECT_EQ(j["rows"], nlohmann::json::parse(R"([
      {"dtype": "float16", "total_bytes": 32, "largest_block_bytes": 16, "training_adam_bytes": 288},
      {"dtype": "int4", "total_bytes": 8, "largest_block_bytes": 4, "training_adam_bytes": null}])"));
  EXPECT_EQ(j["assumptions"], nlohmann::json::parse(R"(["made by hand"])"));
  // The weights class's band, generated from validation/results (memfit/accuracy.h).
  EXPECT_EQ(j["accuracy"]["class"], "weights");
  EXPECT_EQ(j["accuracy"]["source"], "validation/results");
  EXPECT_EQ(j["accuracy"]["rows"], AccuracyFor(AccuracyClass::kWeights).rows);
  EXPECT_EQ(j["accuracy"]["min_error"], AccuracyFor(AccuracyClass::kWeights).min_error);
  // The text form is that JSON, indented, with a newline.
  EXPECT_EQ(RenderLoadEstimate(model, e, OutputFormat::kJson), DumpJson(j) + "\n");
}

TEST(LoadReportTest, PrecomputedBlocksGiveTheSameEstimate) {
  const Model model = Tiny();
  const LoadOptions options{.dtypes = {LoadDtype::kFloat32, LoadDtype::kBFloat16, LoadDtype::kInt8}};
  EXPECT_EQ(RenderLoadEstimate(model, EstimateLoad(model, options), OutputFormat::kJson),
            RenderLoadEstimate(model, EstimateLoad(model, options, AssignBlocks(model, {})),
                               OutputFormat::kJson));
}

TEST(LoadReportTest, CsvAndMarkdown) {
  const Model model = Tiny();
  const LoadEstimate e = EstimateLoad(model, {.dtypes = {LoadDtype::kFloat32}});
  // float32: 16 x 4 B; AdamW 16 B per parameter.
  EXPECT_EQ(RenderLoadEstimate(model, e, OutputFormat::kCsv),
            "dtype,load_bytes,largest_block_bytes,training_adam_bytes\n"
            "float32,64,32,256\n");
  const std::string md = RenderLoadEstimate(model, e, OutputFormat::kMarkdown);
  EXPECT_TRUE(md.starts_with("### Memory to load `tiny`\n\n| dtype | Load |")) << md;
  EXPECT_NE(md.find("| float32 | 64 B | 32 B | 256 B |"), std::string::npos) << md;
  EXPECT_NE(md.find("16 parameters; stored 48 B (hand-made)."), std::string::npos) << md;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
