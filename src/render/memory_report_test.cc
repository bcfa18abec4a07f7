// `memfit inference` and `memfit train` renderers (render/memory_report.cc) on estimates made by
// hand: the renderer's job is to say these numbers, labelled and in the documented JSON shape
// (docs/json.md, memfit.inference/1 and memfit.train/1), so the estimates are given, not computed.

#include <algorithm>

#include <gtest/gtest.h>

#include "formats/json.h"
#include "memfit/accuracy.h"
#include "memfit/render_memory.h"
#include "render/report_json.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

constexpr uint64_t kKiB = uint64_t{1} << 10;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

Model Tiny() {
  Model m;
  m.name = "tiny";
  m.hp.max_position_embeddings = 2048;
  m.assumptions = {"made by hand"};
  return m;
}

InferenceOptions TwoSequences() { return {.context_tokens = 1024, .batch = 2}; }

// Two full-attention layers of 64 KiB per token: 2 sequences x 1,024 tokens x 64 KiB = 128 MiB
// each, 256 MiB in all (128 KiB per token over both layers). Weights 1 GiB (bf16: 2^29
// parameters), activations 64 MiB, CUDA context 1,343 MiB:
// total 1,024 + 256 + 64 + 1,343 = 2,687 MiB = 2.624 GiB.
InferenceEstimate Estimate() {
  InferenceEstimate e;
  e.weights_bytes = 1 * kGiB;
  e.kv_cache_bytes = 256 * kMiB;
  e.activation_bytes = 64 * kMiB;
  e.cuda_context_bytes = 1343 * kMiB;
  e.total_bytes = 2687 * kMiB;
  e.activation_peak_at = "attention scores";
  e.sharding = {.per_gpu_bytes = 1 * kGiB, .replicated_bytes = 1 * kGiB,
                .stages = {{.first_layer = 0, .end_layer = 2, .bytes = 1 * kGiB}}};
  e.kv.bytes = 256 * kMiB;
  e.kv.bytes_per_token = 128 * kKiB;
  e.kv.layers = {{.layer = 0, .kind = "full", .tokens = 1024, .bytes_per_token = 64 * kKiB, .bytes = 128 * kMiB},
                 {.layer = 1, .kind = "full", .tokens = 1024, .bytes_per_token = 64 * kKiB, .bytes = 128 * kMiB}};
  e.weights.kept_params = 1 * kGiB / 2;
  e.weights.kept_bytes = 1 * kGiB;
  e.weights.total_bytes = 1 * kGiB;
  e.weights.stored_format = "none";
  e.assumptions = {"sdpa attention"};
  e.notes = {"a note"};
  return e;
}

TEST(MemoryReportTest, InferenceJsonFollowsTheContract) {
  nlohmann::json j = InferenceJson(Tiny(), TwoSequences(), Estimate());
  EXPECT_EQ(j["schema"], "memfit.inference/1");
  EXPECT_EQ(j["model"], "tiny");
  // No --quant: "stored" (the checkpoint's own format, here none).
  EXPECT_EQ(j["settings"], nlohmann::json::parse(R"({
      "context": 1024, "batch": 2, "new_tokens": 0, "dtype": "bfloat16", "quant": "stored",
      "kv_dtype": "model",
      "attn": "sdpa", "engine": "transformers", "tp": 1, "dp": 1, "ep": 1, "pp": 1,
      "dp_attention": false, "compute_capability": 0})"));
  EXPECT_EQ(j["model_max_context"], 2048);
  // 1 GiB = 1,073,741,824; 256 MiB = 268,435,456; 64 MiB = 67,108,864; 1,343 MiB =
  // 1,408,237,568; 2,687 MiB = 2,817,523,712.
  EXPECT_EQ(j["per_gpu"], nlohmann::json::parse(R"({
      "weights": 1073741824, "kv_cache": 268435456, "activations": 67108864,
      "cuda_context": 1408237568, "allocator_reserve": 0, "cuda_graphs": 0,
      "total": 2817523712})"));
  // The components are per_gpu without the total (nlohmann::json orders keys).
  ASSERT_EQ(j["components"].size(), 6u);
  EXPECT_EQ(j["components"][0], nlohmann::json::parse(R"({"name": "activations", "bytes": 67108864})"));
  EXPECT_EQ(j["total_bytes"], 2817523712u);
  EXPECT_EQ(j["kv_bytes_per_token"], 131072);
  EXPECT_EQ(j["kv_layers"][1], nlohmann::json::parse(
      R"({"layer": 1, "kind": "full", "tokens": 1024, "bytes_per_token": 65536, "bytes": 134217728})"));
  EXPECT_EQ(j["weights_per_gpu"]["stages"], nlohmann::json::parse(
      R"([{"first_layer": 0, "end_layer": 2, "weights": 1073741824}])"));
  EXPECT_EQ(j["weights"]["kept_params"], 536870912);
  EXPECT_TRUE(j["serving"].is_null());  // transformers: no engine budget
  EXPECT_FALSE(j.contains("curve"));
  // The model's assumptions first, then the estimate's.
  EXPECT_EQ(j["assumptions"], nlohmann::json::parse(R"(["made by hand", "sdpa attention"])"));
  EXPECT_EQ(j["notes"], nlohmann::json::parse(R"(["a note"])"));
  // The rendered document adds the hardware verdict: null without --gpu.
  j["verdict"] = nullptr;
  EXPECT_EQ(RenderInference(Tiny(), TwoSequences(), Estimate(), OutputFormat::kJson),
            DumpJson(j) + "\n");
}

TEST(MemoryReportTest, InferenceTableAndCsv) {
  EXPECT_EQ(RenderInference(Tiny(), TwoSequences(), Estimate(), OutputFormat::kCsv),
            "component,bytes,size\n"
            "weights,1073741824,1.00 GiB\n"
            "kv cache,268435456,256.00 MiB\n"
            "activations (attention scores),67108864,64.00 MiB\n"
            "cuda context,1408237568,1.31 GiB\n"  // 1,343 / 1,024 = 1.311
            "total per GPU,2817523712,2.62 GiB\n");
  const std::string table = RenderInference(Tiny(), TwoSequences(), Estimate(), OutputFormat::kTable);
  EXPECT_TRUE(table.starts_with(
      "tiny: inference, 2 x 1024 tokens, bfloat16 weights, kv model, sdpa attention, transformers\n"
      "component                             size\n"))
      << table;
  EXPECT_NE(table.find("total per GPU                     2.62 GiB\n"), std::string::npos) << table;
  // The class's measured band (memfit/accuracy.h, generated from validation/results).
  const std::string accuracy = AccuracyLine(AccuracyFor(AccuracyClass::kInference));
  EXPECT_TRUE(accuracy.starts_with("accuracy (inference): CPU-measured ")) << accuracy;
  const nlohmann::json j = InferenceJson(Tiny(), TwoSequences(), Estimate());
  EXPECT_EQ(j["accuracy"]["class"], "inference");
  EXPECT_EQ(j["accuracy"]["rows"], AccuracyFor(AccuracyClass::kInference).rows);
  EXPECT_TRUE(table.ends_with("kv cache: 128.00 KiB per token (all layers, per GPU)\n" +
                              accuracy + "\n"
                              "assumption: made by hand\n"
                              "assumption: sdpa attention\n"
                              "note: a note\n"))
      << table;
}

TEST(MemoryReportTest, ServingEngineBudgetAndParallelTitle) {
  InferenceOptions o = TwoSequences();
  o.engine = Engine::kVllm;
  o.tp = 2;
  InferenceEstimate e = Estimate();
  e.gpus = 2;
  e.cuda_graph_bytes = 650 * kMiB;
  // 80 GiB x 0.9 = 72 GiB requested.
  e.serving = ServingBudget{.requested_bytes = 72 * kGiB, .non_kv_bytes = 2 * kGiB,
                            .kv_pool_bytes = 70 * kGiB, .page_bytes = 2 * kMiB,
                            .num_blocks = 35840, .token_capacity = 573440,
                            .sequence_bytes = 128 * kMiB, .max_concurrency = 560,
                            .replicas = 1, .fits = true};
  const nlohmann::json j = InferenceJson(Tiny(), o, e);
  EXPECT_EQ(j["settings"]["engine"], "vllm");
  // A serving engine's budget is not measured: the band says so.
  EXPECT_EQ(j["accuracy"], nlohmann::json::parse(R"({"class": "serving", "min_error": null,
      "max_error": null, "rows": 0, "source": "not measured"})"));
  EXPECT_EQ(j["gpus"], 2);
  // 70 GiB = 75,161,927,680 B; 72 GiB = 77,309,411,328 B.
  EXPECT_EQ(j["serving"], nlohmann::json::parse(R"({
      "requested": 77309411328, "non_kv": 2147483648, "kv_pool": 75161927680,
      "page_bytes": 2097152, "num_blocks": 35840, "token_capacity": 573440,
      "sequence_bytes": 134217728, "max_concurrency": 560, "replicas": 1, "draft": 0,
      "fits": true})"));
  const std::string md = RenderInference(Tiny(), o, e, OutputFormat::kMarkdown);
  EXPECT_TRUE(md.starts_with("**tiny: inference, 2 x 1024 tokens, bfloat16 weights, kv model, sdpa "
                             "attention, vllm, tp 2 (2 GPUs)**\n\n"))
      << md;
  EXPECT_NE(md.find("| cuda graphs | 681574400 | 650.00 MiB |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| engine budget (gpu memory x utilization) | 77309411328 | 72.00 GiB |\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- max concurrent sequences of 1024 tokens: 560\n"), std::string::npos) << md;
  EXPECT_FALSE(j["per_gpu"].contains("speculative_draft"));
  // SGLang 0.5's NEXTN draft outside the budget: a row, a per_gpu entry and a component.
  e.serving->draft_bytes = 3 * kMiB;
  const nlohmann::json d = InferenceJson(Tiny(), o, e);
  EXPECT_EQ(d["per_gpu"]["speculative_draft"], 3 * kMiB);
  const nlohmann::json draft = {{"name", "speculative_draft"}, {"bytes", 3 * kMiB}};
  EXPECT_NE(std::find(d["components"].begin(), d["components"].end(), draft),
            d["components"].end())
      << d["components"].dump();
  EXPECT_NE(RenderInference(Tiny(), o, e, OutputFormat::kMarkdown)
                .find("| speculative draft (NEXTN, outside the budget) | 3145728 | 3.00 MiB |\n"),
            std::string::npos);
}

TEST(MemoryReportTest, StoredQuantizationAndAQuantSchemeInTheTitle) {
  InferenceEstimate e = Estimate();
  e.weights.stored_format = "fp8-block";
  e.weights.stored_quantized_bytes = 512 * kMiB;
  EXPECT_NE(RenderInference(Tiny(), TwoSequences(), e, OutputFormat::kTable)
                .find("bfloat16 weights + fp8-block as stored, kv model"),
            std::string::npos);
  InferenceOptions nf4 = TwoSequences();
  nf4.quant.scheme = QuantScheme::kBnbNf4;
  EXPECT_NE(RenderInference(Tiny(), nf4, Estimate(), OutputFormat::kTable)
                .find("bfloat16 weights + nf4, kv model"),
            std::string::npos);
  EXPECT_EQ(InferenceJson(Tiny(), nf4, Estimate())["settings"]["quant"], "nf4");
  InferenceOptions none = TwoSequences();
  none.quant.dequantize_stored = true;  // --quant none
  EXPECT_EQ(InferenceJson(Tiny(), none, Estimate())["settings"]["quant"], "none");
}

TEST(MemoryReportTest, CurveRowsLinesAndAssumptions) {
  ContextCurve curve;
  curve.metric = "total_per_gpu";
  curve.max_context = 2048;
  curve.points = {{.context = 2048, .bytes = 3 * kGiB}};
  curve.limits = {{.gpu = "RTX 4090", .budget_bytes = 24 * kGiB}};
  curve.assumptions = {"curve assumption"};
  const nlohmann::json j = InferenceJson(Tiny(), TwoSequences(), Estimate(), &curve);
  EXPECT_EQ(j["curve"]["points"], nlohmann::json::parse(R"([{"context": 2048, "bytes": 3221225472}])"));
  EXPECT_EQ(j["assumptions"],
            nlohmann::json::parse(R"(["made by hand", "sdpa attention", "curve assumption"])"));
  const std::string csv = RenderInference(Tiny(), TwoSequences(), Estimate(), OutputFormat::kCsv, &curve);
  EXPECT_TRUE(csv.ends_with("total per GPU,2817523712,2.62 GiB\n"
                            "\"total per GPU at 2,048 tokens\",3221225472,3.00 GiB\n"))
      << csv;
  // The curve's assumption is said once, with the estimate's.
  const std::string table =
      RenderInference(Tiny(), TwoSequences(), Estimate(), OutputFormat::kTable, &curve);
  EXPECT_NE(table.find("longest context on RTX 4090 (memory 24.00 GiB): all 2,048 tokens (the "
                       "curve's end)\n"),
            std::string::npos)
      << table;
  size_t count = 0;
  for (size_t at = table.find("assumption: curve assumption"); at != std::string::npos;
       at = table.find("assumption: curve assumption", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 1u) << table;
}

TrainOptions Batch4() { return {.batch = 4, .seq = 512}; }

// Weights 2 MiB (bf16, 1,048,576 parameters), fp32 master copy 4 MiB, gradients 2 MiB, AdamW
// states 8 MiB, activations 10 MiB, logits 1 MiB, transient 3 MiB. Stages: loaded 6 MiB (weights
// + master), backward 29 MiB (everything but nothing freed: 2 + 4 + 2 + 8 + 10 + 1 + 2 of the 3
// transient). Peak: backward 29 MiB + 1,343 MiB context = 1,372 MiB = 1.340 GiB.
TrainEstimate TrainEst() {
  TrainEstimate e;
  e.trainable_params = 1048576;
  e.weights_bytes = 2 * kMiB;
  e.master_weights_bytes = 4 * kMiB;
  e.gradients_bytes = 2 * kMiB;
  e.optimizer_bytes = 8 * kMiB;
  e.activation_bytes = 10 * kMiB;
  e.logits_bytes = 1 * kMiB;
  e.transient_bytes = 3 * kMiB;
  e.cuda_context_bytes = 1343 * kMiB;
  e.stages = {{.stage = "model loaded", .bytes = 6 * kMiB,
               .parts = {{"weights", 2 * kMiB}, {"master weights", 4 * kMiB}}},
              {.stage = "backward", .bytes = 29 * kMiB,
               .parts = {{"weights", 2 * kMiB}, {"master weights", 4 * kMiB},
                         {"optimizer states", 8 * kMiB}, {"gradients", 2 * kMiB},
                         {"activations", 10 * kMiB}, {"logits and loss", 1 * kMiB},
                         {"layer backward and recompute", 2 * kMiB}}}};
  e.peak_bytes = 1372 * kMiB;
  e.peak_stage = "backward";
  e.assumptions = {"train assumption"};
  return e;
}

TEST(MemoryReportTest, TrainJsonFollowsTheContract) {
  const nlohmann::json j = TrainJson(Tiny(), Batch4(), TrainEst());
  EXPECT_EQ(j["schema"], "memfit.train/1");
  EXPECT_EQ(j["settings"], nlohmann::json::parse(R"({
      "method": "full", "optimizer": "adamw", "precision": "bf16-mixed", "batch": 4, "seq": 512,
      "decoder_tokens": 0, "grad_accum": 1, "checkpointing": "none", "attn": "sdpa", "gpus": 1,
      "strategy": "ddp", "offload": "none", "tp": 1, "pp": 1, "lora_rank": 8, "lora_alpha": 8.0})"));
  EXPECT_EQ(j["trainable_params"], 1048576);
  // 1,372 MiB = 1,438,646,272 B: total_bytes is the peak, not the sum of the components.
  EXPECT_EQ(j["per_gpu"]["peak"], 1438646272);
  EXPECT_EQ(j["total_bytes"], 1438646272);
  EXPECT_EQ(j["peak_stage"], "backward");
  EXPECT_EQ(j["components"].size(), 10u);  // per_gpu's eleven entries but the peak
  EXPECT_EQ(j["stages"][0], nlohmann::json::parse(R"({"stage": "model loaded", "bytes": 6291456,
      "parts": [{"name": "weights", "bytes": 2097152}, {"name": "master weights", "bytes": 4194304}]})"));
  EXPECT_EQ(j["cpu_ram"], 0);
  EXPECT_EQ(j["assumptions"], nlohmann::json::parse(R"(["made by hand", "train assumption"])"));
}

TEST(MemoryReportTest, TrainTableRowsAndOffloadRow) {
  const std::string csv = RenderTrain(Tiny(), Batch4(), TrainEst(), OutputFormat::kCsv);
  // No communication or allocator-reserve row when they are 0; one row per stage.
  EXPECT_EQ(csv,
            "component,bytes,size\n"
            "weights,2097152,2.00 MiB\n"
            "master weights / autocast copies,4194304,4.00 MiB\n"
            "gradients,2097152,2.00 MiB\n"
            "optimizer states,8388608,8.00 MiB\n"
            "activations,10485760,10.00 MiB\n"
            "logits and loss,1048576,1.00 MiB\n"
            "transient (backward / optimizer),3145728,3.00 MiB\n"
            "cuda context,1408237568,1.31 GiB\n"
            "stage: model loaded,6291456,6.00 MiB\n"
            "stage: backward,30408704,29.00 MiB\n"
            "peak per GPU (backward),1438646272,1.34 GiB\n");
  TrainEstimate offload = TrainEst();
  offload.cpu_bytes = 12 * kMiB;
  TrainOptions zero = Batch4();
  zero.strategy = Strategy::kZero3;
  zero.offload = Offload::kOptimizer;
  const std::string table = RenderTrain(Tiny(), zero, offload, OutputFormat::kTable);
  EXPECT_TRUE(table.starts_with(
      "tiny: train full (1.05M trainable params), adamw, bf16-mixed, batch 4 x seq 512, "
      "grad-accum 1, checkpointing none, sdpa attention, 1 GPU(s) zero3\n"))
      << table;
  EXPECT_NE(table.find("CPU RAM (offload) per process     12.00 MiB\n"), std::string::npos) << table;
  EXPECT_TRUE(table.ends_with("assumption: made by hand\nassumption: train assumption\n")) << table;
}

TEST(MemoryReportTest, VerdictComesFirstAndZeroRowsOnlyWhenWide) {
  TrainEstimate lora = TrainEst();
  lora.master_weights_bytes = 0;  // a row of zero bytes
  HardwareVerdict verdict;
  verdict.line = "fits on 1 x GPU: made by hand";
  const std::string table =
      RenderTrain(Tiny(), Batch4(), lora, OutputFormat::kTable, &verdict, TextLayout{.width = 100});
  EXPECT_TRUE(table.starts_with("fits on 1 x GPU: made by hand\ntiny: train full")) << table;
  EXPECT_EQ(table.find("master weights"), std::string::npos) << table;
  const std::string wide = RenderTrain(Tiny(), Batch4(), lora, OutputFormat::kTable, &verdict,
                                       TextLayout{.width = 100, .wide = true});
  EXPECT_NE(wide.find("master weights / autocast copies        0 B\n"), std::string::npos) << wide;
  // The CSV keeps every row; the JSON has the verdict object, null without one.
  EXPECT_NE(RenderTrain(Tiny(), Batch4(), lora, OutputFormat::kCsv).find("master weights"),
            std::string::npos);
  const auto j = nlohmann::json::parse(RenderTrain(Tiny(), Batch4(), lora, OutputFormat::kJson,
                                                   &verdict));
  EXPECT_EQ(j["verdict"]["line"], "fits on 1 x GPU: made by hand");
  EXPECT_EQ(j["verdict"]["verdict"], "does not fit");  // HardwareVerdict's default
  EXPECT_TRUE(nlohmann::json::parse(RenderTrain(Tiny(), Batch4(), lora, OutputFormat::kJson))["verdict"]
                  .is_null());
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
