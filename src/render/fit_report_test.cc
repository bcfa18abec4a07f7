// `memfit fit` and `memfit gpus` renderers (render/fit_report.cc) on a plan made by hand: two GPUs
// and the CPU, an offloaded block, advice that fits and advice that costs memory.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "formats/json.h"
#include "memfit/accuracy.h"
#include "memfit/render_fit.h"
#include "render/report_json.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

struct Fixture {
  Model model;
  FitRequest request;
  RuntimeModel runtime;
  FitPlan plan;
  FitReportInput Input() const {
    return {.model = &model, .request = &request, .runtime = &runtime, .plan = &plan};
  }
};

// GPU 0 (RTX 4090, 24 GiB): the embedding and layers 0-2, 18 of its 20 GiB budget, 1 GiB kept
// free for the offloaded blocks; GPU 1 (a bare 8 GiB): layer 3; the CPU: layer 4 and the head,
// 2 GiB. The plan's total, 25 GiB, is its terms: weights 24 GiB + KV cache 1004 MiB + 10 MiB per
// GPU x 2 GPUs used.
Fixture Make() {
  Fixture f;
  f.model.name = "tiny";
  f.model.assumptions = {"made by hand"};
  f.request.gpus = {{.label = "RTX 4090", .memory_bytes = 24 * kGiB},
                    {.label = "8.00 GiB GPU", .memory_bytes = 8 * kGiB}};
  f.request.dtype = LoadDtype::kFloat16;
  f.runtime.task = "inference";
  FitPlan& p = f.plan;
  p.verdict = Verdict::kFitsWithOffload;
  p.weight_bytes = 24 * kGiB;
  p.runtime = {.per_gpu_bytes = 10 * kMiB, .per_layer_bytes = 5 * kMiB};
  p.total_bytes = 25 * kGiB;
  p.terms = {.weight_bytes = 24 * kGiB, .kv_cache_bytes = 1004 * kMiB,
             .per_gpu_bytes = 10 * kMiB, .gpus_used = 2};
  p.gpus_needed = 3;
  p.map.devices = {
      {.kind = DeviceKind::kGpu, .index = 0, .max_memory = 20 * kGiB, .used_bytes = 18 * kGiB,
       .reserved_bytes = 1 * kGiB,
       .modules = {"model.embed", "model.layers.0", "model.layers.1", "model.layers.2"}},
      {.kind = DeviceKind::kGpu, .index = 1, .max_memory = 6 * kGiB, .used_bytes = 5 * kGiB,
       .modules = {"model.layers.3"}},
      {.kind = DeviceKind::kCpu, .max_memory = UINT64_MAX, .used_bytes = 2 * kGiB,
       .modules = {"model.layers.4", "lm_head"}}};
  p.map.entries = {{"model.embed", "0"},    {"model.layers.0", "0"}, {"model.layers.1", "0"},
                   {"model.layers.2", "0"}, {"model.layers.3", "1"}, {"model.layers.4", "cpu"},
                   {"lm_head", "cpu"}};
  p.map.offloaded_bytes = 2 * kGiB;
  p.map.largest_block_bytes = 1 * kGiB;
  p.map.largest_block_names = {"model.layers.0", "model.layers.1"};
  p.limits.max_context_tokens = 8192;
  p.speed = {.decode_tokens_per_s = 12.345, .prefill_tokens_per_s = 2500.4,
             .bytes_per_token = 1 * kGiB, .active_parameters = 8000000000, .notes = {"speed note"}};
  p.advice = {{.action = "load the weights in NF4", .quality_cost = 2, .quality_note = "q",
               .total_bytes = 10 * kGiB, .saved_bytes = 15 * int64_t{kGiB},
               .verdict = Verdict::kFits, .detail = "d"},
              {.action = "KV cache in float32", .quality_cost = 0, .total_bytes = 27 * kGiB,
               .saved_bytes = -2 * int64_t{kGiB}, .verdict = Verdict::kFitsWithOffload}};
  p.notes = {"plan note"};
  return f;
}

TEST(FitReportTest, JsonFollowsTheContract) {
  const Fixture f = Make();
  const nlohmann::ordered_json j = FitPlanJson(f.Input());
  EXPECT_EQ(j["schema"], "memfit.fit/1");
  EXPECT_EQ(j["task"], "inference");
  EXPECT_EQ(j["dtype"], "float16");
  EXPECT_EQ(j["verdict"], "fits with offload");
  EXPECT_EQ(j["gpus_needed"], 3);
  EXPECT_EQ(j["weight_bytes"], 24 * kGiB);
  EXPECT_EQ(j["runtime"]["per_layer_bytes"], 5 * kMiB);
  EXPECT_EQ(j["total_bytes"], 25 * kGiB);
  EXPECT_EQ(j["largest_block_bytes"], 1 * kGiB);
  ASSERT_EQ(j["devices"].size(), 3u);
  EXPECT_EQ(j["devices"][0]["device"], "0");
  EXPECT_EQ(j["devices"][0]["label"], "0 (RTX 4090)");
  EXPECT_EQ(j["devices"][0]["max_memory"], 20 * kGiB);
  EXPECT_EQ(j["devices"][0]["reserved_bytes"], 1 * kGiB);
  EXPECT_EQ(j["devices"][1]["label"], "1 (8.00 GiB GPU)");
  EXPECT_EQ(j["devices"][2]["device"], "cpu");
  EXPECT_EQ(j["devices"][2]["max_memory"], "unlimited");  // UINT64_MAX
  EXPECT_EQ(j["device_map"]["model.layers.3"], 1);        // a GPU index is a number
  EXPECT_EQ(j["device_map"]["lm_head"], "cpu");
  EXPECT_EQ(j["limits"].dump(), R"({"max_context_tokens":8192})");  // no max_batch given
  EXPECT_EQ(j["speed_upper_bounds"]["active_parameters"], 8000000000u);
  ASSERT_EQ(j["advice"].size(), 2u);
  EXPECT_EQ(j["advice"][0]["quality_cost"], "small");
  EXPECT_EQ(j["advice"][1]["saved_bytes"], -2 * int64_t{kGiB});
  EXPECT_EQ(j["advice"][1]["verdict"], "fits with offload");
  EXPECT_EQ(j["notes"][0], "plan note");
  EXPECT_EQ(j["assumptions"][0], "made by hand");
  // A device map for --task inference carries the inference class's band.
  EXPECT_EQ(j["accuracy"]["class"], "inference");
  EXPECT_EQ(j["accuracy"]["rows"], AccuracyFor(AccuracyClass::kInference).rows);
  const auto parsed = nlohmann::json::parse(RenderFitPlan(f.Input(), OutputFormat::kJson));
  EXPECT_EQ(parsed, nlohmann::json(j));
}

TEST(FitReportTest, CsvIsTheSummaryThenOneRowPerDevice) {
  const Fixture f = Make();
  EXPECT_EQ(RenderFitPlan(f.Input(), OutputFormat::kCsv),
            "tiny on RTX 4090 + 8.00 GiB GPU (task inference, weights float16)\n"
            "verdict: fits with offload (2.00 GiB offloaded off the GPUs)\n"
            "GPUs needed: 3 x RTX 4090 (whole model on GPUs, accelerate's map)\n"
            "memory: weights 24.00 GiB + KV cache 1004.00 MiB + runtime 10.00 MiB per GPU x 2 = "
            "25.00 GiB\n" +
            AccuracyLine(AccuracyFor(AccuracyClass::kInference)) + "\n"
            "largest block: 1.00 GiB (model.layers.0-1)\n\n"
            "device,memory limit,used,kept free,blocks\n"
            "0 (RTX 4090),20.00 GiB,18.00 GiB,1.00 GiB,\"model.embed, model.layers.0-2\"\n"
            "1 (8.00 GiB GPU),6.00 GiB,5.00 GiB,0 B,model.layers.3\n"
            "cpu,unlimited,2.00 GiB,0 B,\"model.layers.4, lm_head\"\n");
}

TEST(FitReportTest, TableSpeedLimitsAdviceNotes) {
  const Fixture f = Make();
  const std::string table = RenderFitPlan(f.Input(), OutputFormat::kTable);
  // 12.345 tok/s: three significant digits under 100; 2,500.4: none after the point.
  EXPECT_THAT(table, HasSubstr("speed (upper bounds, one sequence): decode <= 12.3 tok/s, prefill <= "
                               "2500 tok/s\n  1.00 GiB read per token, 8.00B active parameters\n"
                               "  speed note\n"
                               "limits on the GPUs: context <= 8192 tokens, batch <= -\n"));
  EXPECT_THAT(table, HasSubstr("\nadvice (fitting first, then by cost to quality):\n"
                               "change                   new total      saved               then  quality cost\n"));
  // Negative savings (the change costs memory) keep their sign.
  EXPECT_THAT(table, HasSubstr("KV cache in float32      27.00 GiB  -2.00 GiB  fits with offload          none\n"));
  EXPECT_TRUE(table.ends_with("note: plan note\nassumed: made by hand\n")) << table;
}

TEST(FitReportTest, DoesNotFitNamesWhatCouldNotBePlaced) {
  Fixture f = Make();
  f.plan.verdict = Verdict::kDoesNotFit;
  f.plan.gpus_needed = std::nullopt;
  f.plan.no_count_reason = "the reason, as the planner gives it";
  f.plan.map.unplaced = {"lm_head"};
  f.plan.map.unplaced_bytes = 512 * kMiB;
  f.plan.speed = {};  // 0 = unknown
  f.plan.limits = {};
  f.plan.advice.clear();
  EXPECT_TRUE(FitPlanJson(f.Input())["gpus_needed"].is_null());
  const std::string table = RenderFitPlan(f.Input(), OutputFormat::kTable);
  EXPECT_THAT(table, HasSubstr("verdict: does not fit (512.00 MiB could not be placed)\n"
                               "GPUs needed: no number of RTX 4090 holds it: the reason, as the planner "
                               "gives it\n"));
  EXPECT_THAT(table, HasSubstr("decode <= unknown, prefill <= unknown\n"));
  EXPECT_THAT(table, Not(HasSubstr("limits on the GPUs")));
  EXPECT_THAT(table, Not(HasSubstr("advice")));
  EXPECT_TRUE(RenderFitPlan(f.Input(), OutputFormat::kCsv)
                  .ends_with("(not placed),,512.00 MiB,,lm_head\n"));
}

TEST(FitReportTest, CompressModuleListCollapsesConsecutiveSiblings) {
  std::vector<std::string> layers;
  for (int i = 0; i <= 13; ++i) layers.push_back("model.layers." + std::to_string(i));
  layers.push_back("model.norm");
  EXPECT_EQ(CompressModuleList(layers), "model.layers.0-13, model.norm");
  EXPECT_EQ(CompressModuleList({"a.1", "a.3", "a.4"}), "a.1, a.3-4");  // a gap starts a new run
  EXPECT_EQ(CompressModuleList({"a.1", "b.2"}), "a.1, b.2");          // another parent
  EXPECT_EQ(CompressModuleList({""}), "(whole model)");
  // Ten digits are not an index (stol could overflow on longer ones): listed as they are.
  EXPECT_EQ(CompressModuleList({"a.1234567890", "a.1234567891"}), "a.1234567890, a.1234567891");
  EXPECT_EQ(CompressModuleList({}), "");
}

TEST(FitReportTest, GpuListJsonAndTable) {
  const GpuSpec card{.name = "Test GPU", .vendor = GpuVendor::kNvidia, .memory_gb = 24,
                     .bandwidth_gb_s = 1008, .tensor_tflops = 165.2, .memory_type = "GDDR6X",
                     .source = "spec sheet"};
  const GpuSpec mac{.name = "Test Mac", .vendor = GpuVendor::kApple, .memory_gb = 128,
                    .bandwidth_gb_s = 546, .unified_memory = true, .memory_type = "LPDDR5X",
                    .source = "apple"};
  const std::vector<const GpuSpec*> gpus = {&card, &mac};
  const auto j = nlohmann::json::parse(RenderGpuList(gpus, OutputFormat::kJson));
  EXPECT_EQ(j["schema"], "memfit.gpus/1");
  // 24 GB (binary, see memfit/gpu.h) = 24 x 2^30 = 25,769,803,776 B.
  EXPECT_EQ(j["gpus"][0], nlohmann::json::parse(R"({"name": "Test GPU", "vendor": "nvidia",
      "memory_bytes": 25769803776, "bandwidth_gb_s": 1008.0, "bf16_dense_tflops": 165.2,
      "unified_memory": false, "memory_type": "GDDR6X", "source": "spec sheet"})"));
  EXPECT_EQ(j["gpus"][1]["memory_bytes"], 128 * kGiB);
  EXPECT_EQ(RenderGpuList(gpus, OutputFormat::kCsv),
            "name,vendor,memory,bandwidth GB/s,bf16 dense TFLOPS,type,source\n"
            "Test GPU,nvidia,24.00 GiB,1008,165.2,GDDR6X,spec sheet\n"
            "Test Mac,apple,128.00 GiB unified,546,0,LPDDR5X,apple\n");
}

TEST(FitReportTest, DeviceMapAndJsonKeepTheirOrder) {
  // The device map in placement order (a reader follows the layers: model.layers.10 after .9),
  // and the JSON in its documented field order (schema first), as FitPlanJson builds them.
  const Fixture f = Make();
  const std::string table = RenderFitPlan(f.Input(), OutputFormat::kTable);
  EXPECT_THAT(table, HasSubstr("\ndevice_map = {\"model.embed\":0,\"model.layers.0\":0,\"model.layers.1\":0,"
                               "\"model.layers.2\":0,\"model.layers.3\":1,\"model.layers.4\":\"cpu\","
                               "\"lm_head\":\"cpu\"}\n\n"));
  const std::string json = RenderFitPlan(f.Input(), OutputFormat::kJson);
  EXPECT_TRUE(json.starts_with("{\n  \"schema\": \"memfit.fit/1\",\n  \"model\": \"tiny\",\n"))
      << json;
  const std::vector<const GpuSpec*> none;
  EXPECT_EQ(RenderGpuList(none, OutputFormat::kJson),
            "{\n  \"schema\": \"memfit.gpus/1\",\n  \"gpus\": []\n}\n");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
