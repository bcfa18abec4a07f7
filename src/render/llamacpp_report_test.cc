// llama.cpp reports (render/llamacpp_report.cc): `gguf inference` and `gguf fit`, on an estimate
// made by hand (one GPU holding both blocks and the output layer, the host the input layer).

#include <gtest/gtest.h>

#include "formats/json.h"
#include "memfit/accuracy.h"
#include "memfit/llamacpp_report.h"
#include "render/report_json.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

constexpr uint64_t kMiB = uint64_t{1} << 20;

Model Tiny() {
  Model m;
  m.name = "tiny.gguf";
  m.model_type = "llama";
  m.hp.num_layers = 2;
  m.hp.max_position_embeddings = 4096;
  // 1,000,000 elements in tensors.
  m.tensors = {Tensor{.name = "blk.0.w", .shape = {1000, 1000}, .dtype_label = "Q4_0",
                      .numel = 1000000, .bytes = 500000}};
  m.assumptions = {"model assumption"};
  m.notes = {"model note"};
  return m;
}

// CUDA0: 448 KiB weights + 64 MiB KV + 100 MiB compute + 250 MiB context
//   = 458,752 + 67,108,864 + 104,857,600 + 262,144,000 = 434,569,216 B = 414.44 MiB.
// Host: 41,248 B of weights (500,000 - 458,752) + 128 KiB output = 172,320 B = 168.28 KiB.
LlamaCppEstimate Estimate() {
  LlamaCppEstimate e;
  e.n_ctx = 4096;
  e.n_ctx_seq = 4096;
  e.n_ubatch = 512;
  e.flash_attn = true;
  e.kv_cells_full = 4096;
  e.kv_k_bytes = 32 * kMiB;
  e.kv_v_bytes = 32 * kMiB;
  e.offloaded_layers = 3;
  e.total_layers = 3;
  e.model_file_tensor_bytes = 500000;
  e.devices = {LlamaCppDevice{.name = "CUDA0", .model_bytes = 458752, .kv_bytes = 64 * kMiB,
                              .compute_bytes = 100 * kMiB, .context_bytes = 250 * kMiB,
                              .layers = 2, .output_layer = true},
               LlamaCppDevice{.name = "Host", .is_host = true, .model_bytes = 41248,
                              .output_bytes = 128 * 1024}};
  e.assumptions = {"estimate assumption"};
  e.notes = {"estimate note"};
  return e;
}

TEST(LlamaCppReportTest, JsonDevicesAndTheirTotals) {
  const nlohmann::json j = LlamaCppEstimateJson(Tiny(), Estimate());
  EXPECT_EQ(j["model"], "tiny.gguf");
  EXPECT_EQ(j["architecture"], "llama");
  EXPECT_EQ(j["model_max_context"], 4096);
  EXPECT_EQ(j["n_ctx"], 4096);
  EXPECT_EQ(j["n_ubatch"], 512);
  EXPECT_EQ(j["flash_attn"], true);
  EXPECT_EQ(j["kv_k_bytes"], 33554432);
  EXPECT_EQ(j["offloaded_layers"], 3);
  EXPECT_EQ(j["devices"], nlohmann::json::parse(R"([
      {"name": "CUDA0", "host": false, "layers": 2, "output_layer": true, "model_bytes": 458752,
       "kv_bytes": 67108864, "rs_bytes": 0, "compute_bytes": 104857600, "output_bytes": 0,
       "context_bytes": 262144000, "total_bytes": 434569216},
      {"name": "Host", "host": true, "layers": 0, "output_layer": false, "model_bytes": 41248,
       "kv_bytes": 0, "rs_bytes": 0, "compute_bytes": 0, "output_bytes": 131072,
       "context_bytes": 0, "total_bytes": 172320}])"));
  EXPECT_EQ(j["assumptions"], nlohmann::json::parse(R"(["model assumption", "estimate assumption"])"));
  EXPECT_EQ(j["notes"], nlohmann::json::parse(R"(["model note", "estimate note"])"));
  EXPECT_EQ(j["accuracy"]["class"], "llama.cpp");
  EXPECT_EQ(j["accuracy"]["source"], "not measured");
  EXPECT_TRUE(j["accuracy"]["min_error"].is_null());
  EXPECT_FALSE(j.contains("curve"));
  EXPECT_EQ(RenderLlamaCppEstimate(Tiny(), Estimate(), OutputFormat::kJson), DumpJson(j) + "\n");
}

TEST(LlamaCppReportTest, CsvOneRowPerDevice) {
  EXPECT_EQ(RenderLlamaCppEstimate(Tiny(), Estimate(), OutputFormat::kCsv),
            "device,layers,model,KV cache,recurrent,compute,output,CUDA context,total\n"
            "CUDA0,2 + output,448.00 KiB,64.00 MiB,0 B,100.00 MiB,0 B,250.00 MiB,414.44 MiB\n"
            "Host,0 + input,40.28 KiB,0 B,0 B,0 B,128.00 KiB,0 B,168.28 KiB\n");
}

TEST(LlamaCppReportTest, TableSummaryAndFooter) {
  const std::string table = RenderLlamaCppEstimate(Tiny(), Estimate(), OutputFormat::kTable);
  // 500,000 B over 1,000,000 elements = 4.00 bits per weight; 500,000 B = 488.28 KiB.
  EXPECT_TRUE(table.starts_with(
      "model: tiny.gguf (llama, 2 layers)\n"
      "weights: 488.28 KiB in tensors, 1.00M parameters, 4.00 bits per weight\n"
      "context: n_ctx 4096 (n_ctx_seq 4096, 1 sequence), n_ubatch 512, flash attention on\n"
      "KV cache: K 32.00 MiB + V 32.00 MiB (4096 cells), recurrent state 0 B\n"
      "offloaded 3/3 layers to GPU\n\n"))
      << table;
  EXPECT_TRUE(table.ends_with(
      "\ncompute buffers are a model (see docs/estimates.md, GGUF); model buffers and KV cache are "
      "exact\naccuracy (llama.cpp): not measured\nassumption: model assumption\nassumption: estimate assumption\nnote: model note\n"
      "note: estimate note\n"))
      << table;
  // Several sequences and a sliding-window cache.
  LlamaCppEstimate e = Estimate();
  e.n_seq = 4;
  e.n_ctx_seq = 1024;
  e.kv_cells_swa = 2048;
  e.flash_attn = false;
  const std::string swa = RenderLlamaCppEstimate(Tiny(), e, OutputFormat::kTable);
  EXPECT_NE(swa.find("context: n_ctx 4096 (n_ctx_seq 1024, 4 sequences), n_ubatch 512, flash "
                     "attention off\n"),
            std::string::npos)
      << swa;
  EXPECT_NE(swa.find("(4096 cells, sliding-window layers 2048 cells)"), std::string::npos) << swa;
}

TEST(LlamaCppReportTest, CurveInJsonAndText) {
  ContextCurve curve;
  curve.metric = "largest_gpu";
  curve.max_context = 4096;
  curve.points = {{.context = 4096, .bytes = 434569216}};
  curve.limits = {{.gpu = "RTX 4090", .budget_bytes = 24ull << 30}};
  curve.assumptions = {"curve assumption"};
  const nlohmann::json j = LlamaCppEstimateJson(Tiny(), Estimate(), &curve);
  EXPECT_EQ(j["curve"]["metric"], "largest_gpu");
  EXPECT_EQ(j["assumptions"].back(), "curve assumption");
  const std::string table = RenderLlamaCppEstimate(Tiny(), Estimate(), OutputFormat::kTable, &curve);
  EXPECT_NE(table.find("\nlargest GPU at 4,096 tokens: 414.44 MiB\n"
                       "longest context on RTX 4090 (memory 24.00 GiB): all 4,096 tokens (the "
                       "curve's end)\n"
                       "assumption: curve assumption\n"),
            std::string::npos)
      << table;
}

TEST(LlamaCppReportTest, FitPlanCommandStepsAndEstimate) {
  LlamaCppFitPlan plan;
  plan.fits = false;
  plan.arguments = {"-c", "4096", "-ngl", "99"};
  plan.steps = {"context 8192 -> 4096"};
  plan.estimate = Estimate();
  const std::string json = RenderLlamaCppFit(Tiny(), plan, "-m tiny.gguf", OutputFormat::kJson);
  const auto j = nlohmann::json::parse(json);
  EXPECT_EQ(j["fits"], false);
  EXPECT_EQ(j["command"], "llama-server -m tiny.gguf -c 4096 -ngl 99");
  EXPECT_EQ(j["arguments"], nlohmann::json::parse(R"(["-c", "4096", "-ngl", "99"])"));
  EXPECT_EQ(j["steps"], nlohmann::json::parse(R"(["context 8192 -> 4096"])"));
  EXPECT_EQ(j["estimate"], LlamaCppEstimateJson(Tiny(), Estimate()));
  const std::string text = RenderLlamaCppFit(Tiny(), plan, "-m tiny.gguf", OutputFormat::kTable);
  EXPECT_TRUE(text.starts_with("does NOT fit (closest configuration shown)\n"
                               "  - context 8192 -> 4096\n\nmodel: tiny.gguf (llama, 2 layers)\n"))
      << text;
  EXPECT_TRUE(text.ends_with("\nllama.cpp command:\n  llama-server -m tiny.gguf -c 4096 -ngl 99\n"))
      << text;
  plan.fits = true;
  EXPECT_TRUE(RenderLlamaCppFit(Tiny(), plan, "--hf-repo org/x --hf-file x.gguf", OutputFormat::kTable)
                  .starts_with("fits\n"));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
