// `memfit fit --engine` deployments (render/deploy_report.cc) on rows made by hand: one that fits,
// one the engine refuses, one that runs but does not fit.

#include <gtest/gtest.h>

#include "formats/json.h"
#include "memfit/engine_release.h"
#include "memfit/render_deploy.h"
#include "render/report_json.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

constexpr uint64_t kGiB = uint64_t{1} << 30;

struct Fixture {
  Model model;
  InferenceOptions options{.context_tokens = 4096, .batch = 8, .kv_dtype = KvDtype::kFp8,
                           .engine = Engine::kVllm};
  std::vector<DeploymentRow> rows;
  DeployReportInput Input(std::string mode) {
    return {.model = &model, .options = &options, .mode = std::move(mode), .rows = &rows};
  }
};

Fixture Make() {
  Fixture f;
  f.model.name = "tiny";
  f.model.assumptions = {"made by hand"};
  DeploymentRow fits{.gpu = "H100 SXM", .gpu_memory_bytes = 80 * kGiB, .gpus = 2,
                     .layout = {.tp = 2}, .runs = true, .fits = true,
                     .weights_per_gpu_bytes = 10 * kGiB, .total_per_gpu_bytes = 72 * kGiB,
                     .kv_pool_bytes = 50 * kGiB, .gpu_memory_utilization = 0.92,
                     .engine_flags = "--gpu-memory-utilization 0.92", .max_sequences = 120,
                     .max_context_tokens = 131072, .decode_tokens_per_s = 123.4,
                     .prefill_tokens_per_s = 0, .assumptions = {"a1"}};
  DeploymentRow refused{.gpu = "T4", .gpu_memory_bytes = 16 * kGiB, .gpus = 1, .runs = false,
                        .refusal = "fp8 weights need compute capability 8.9",
                        .assumptions = {"a1", "a2"}};
  DeploymentRow misses{.gpu = "80.00 GiB GPU", .gpu_memory_bytes = 80 * kGiB, .gpus = 8,
                       .layout = {.tp = 4, .dp = 2, .ep = 8, .dp_attention = true},
                       .runs = true, .fits = false, .weights_per_gpu_bytes = 20 * kGiB,
                       .total_per_gpu_bytes = 90 * kGiB, .prefill_tokens_per_s = 5000.4};
  f.rows = {fits, refused, misses};
  return f;
}

TEST(DeployReportTest, JsonRowsRequestAndAssumptionsOnceEach) {
  Fixture f = Make();
  const nlohmann::json j = DeployJson(f.Input("search"));
  EXPECT_EQ(j["schema"], "memfit.deploy/1");
  EXPECT_EQ(j["mode"], "search");
  // A given utilization (0.9); no release set on these options: null.
  EXPECT_EQ(j["request"], nlohmann::json::parse(R"({"engine": "vllm", "context": 4096,
      "sequences": 8, "kv_dtype": "fp8", "gpu_memory_utilization": 0.9,
      "engine_version": null})"));
  ASSERT_EQ(j["rows"].size(), 3u);
  // 80 GiB = 85,899,345,920 B; 10 GiB = 10,737,418,240; 72 GiB = 77,309,411,328; 50 GiB =
  // 53,687,091,200.
  EXPECT_EQ(j["rows"][0], nlohmann::json::parse(R"({
      "gpu": "H100 SXM", "gpu_memory_bytes": 85899345920, "gpus": 2, "layout": "tp2", "tp": 2,
      "dp": 1, "ep": 1, "pp": 1, "dp_attention": false, "runs": true, "fits": true,
      "verdict": "fits", "weights_per_gpu_bytes": 10737418240,
      "total_per_gpu_bytes": 77309411328, "kv_pool_bytes": 53687091200,
      "gpu_memory_utilization": 0.92, "engine_flags": "--gpu-memory-utilization 0.92",
      "max_sequences": 120,
      "max_context_tokens": 131072, "decode_tokens_per_s": 123.4, "prefill_tokens_per_s": 0.0})"));
  EXPECT_EQ(j["rows"][1]["verdict"], "refused");
  EXPECT_EQ(j["rows"][1]["refusal"], "fp8 weights need compute capability 8.9");
  EXPECT_FALSE(j["rows"][0].contains("refusal"));  // only when it does not run
  EXPECT_EQ(j["rows"][2]["layout"], "tp4 ep8 dp2-attention");
  EXPECT_EQ(j["rows"][2]["verdict"], "does not fit");
  // The model's assumption, then a1 and a2 once each although two rows say a1.
  EXPECT_EQ(j["assumptions"], nlohmann::json::parse(R"(["made by hand", "a1", "a2"])"));
  EXPECT_EQ(j["accuracy"]["class"], "serving");  // vLLM: not measured
  EXPECT_EQ(j["accuracy"]["rows"], 0);
  EXPECT_EQ(RenderDeploy(f.Input("search"), OutputFormat::kJson), DumpJson(j) + "\n");
  // The release's default utilization (< 0 on the options): null in the request, the row has
  // the fraction used; the release's version is named.
  f.options.gpu_memory_utilization = -1;
  auto release = FindEngineRelease(Engine::kVllm, "0.11");
  ASSERT_TRUE(release);
  f.options.release = *release;
  const nlohmann::json k = DeployJson(f.Input("search"));
  EXPECT_TRUE(k["request"]["gpu_memory_utilization"].is_null());
  EXPECT_EQ(k["request"]["engine_version"], "0.11");
}

TEST(DeployReportTest, CsvDashesForARefusedRowAndQuestionMarksForUnknownRates) {
  Fixture f = Make();
  // 123.4 tok/s -> "123"; 0 = unknown -> "?"; 5000.4 -> "5000".
  EXPECT_EQ(RenderDeploy(f.Input("grid"), OutputFormat::kCsv),
            "gpus,gpu,layout,verdict,weights/GPU,total/GPU,max seqs,max context,decode tok/s,"
            "prefill tok/s\n"
            "2,H100 SXM,tp2,fits,10.00 GiB,72.00 GiB,120,131072,123,?\n"
            "1,T4,tp1,refused,-,-,-,-,-,-\n"
            "8,80.00 GiB GPU,tp4 ep8 dp2-attention,does not fit,20.00 GiB,90.00 GiB,0,0,?,5000\n");
}

TEST(DeployReportTest, TableTitleRefusalAndNotes) {
  Fixture f = Make();
  const std::string table = RenderDeploy(f.Input("deployment"), OutputFormat::kTable);
  EXPECT_TRUE(table.starts_with("tiny: vllm serving 8 sequence(s) of 4096 tokens (deployment)\n"))
      << table;
  EXPECT_TRUE(table.ends_with(
      "assumption: made by hand\n"
      "flags (H100 SXM x2, tp2): --gpu-memory-utilization 0.92\n"
      "assumption: a1\n"
      "refused (T4 x1): fp8 weights need compute capability 8.9\n"
      "assumption: a2\n"
      "note: decode tok/s is one sequence's memory-bandwidth bound, prefill tok/s the compute "
      "bound over all GPUs (docs/estimates.md, \"Deployment planning\")\n"))
      << table;
  const std::string md = RenderDeploy(f.Input("deployment"), OutputFormat::kMarkdown);
  EXPECT_TRUE(md.starts_with("**tiny: vllm serving 8 sequence(s) of 4096 tokens (deployment)**\n\n"))
      << md;
  EXPECT_NE(md.find("| 1 | T4 | tp1 | refused | - | - | - | - | - | - |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("- refused (T4 x1): fp8 weights need compute capability 8.9\n"),
            std::string::npos)
      << md;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
