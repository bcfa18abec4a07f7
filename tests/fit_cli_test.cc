// `memfit fit` and `memfit gpus` end to end through memfit::cli::Run.

#include <algorithm>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::RunMemfit;
using testing::RunResult;

TEST(FitCliTest, CatalogModelOnAnRtx4090AsJson) {
  auto r = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "rtx4090", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "memfit.fit/1");
  EXPECT_EQ(j["verdict"], "fits");
  EXPECT_EQ(j["gpus_needed"], 1);
  // 16,060,522,752 bytes of bf16 weights (DeviceMapRealTest) on one 24 GiB GPU: {"": 0}.
  EXPECT_EQ(j["weight_bytes"], 16060522752u);
  EXPECT_EQ(j["device_map"], nlohmann::json({{"", 0}}));
  // Decode bound: 1008 GB/s / 16,060,522,752 bytes = 62.76 tok/s.
  EXPECT_NEAR(j["speed_upper_bounds"]["decode_tokens_per_s"].get<double>(), 62.763, 0.01);
  EXPECT_FALSE(j["advice"].empty());
}

TEST(FitCliTest, OffloadTableAndDeviceMapJson) {
  auto r = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "8GiB", "--ram", "16GiB",
                   "--strategy", "sequential", "--device-map"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // 8 GiB GPU: lm_head (1,050,673,152) kept free -> embed + layers 0-13; the rest
  // on the CPU.
  EXPECT_EQ(j["model.embed_tokens"], 0);
  EXPECT_EQ(j["lm_head"], "cpu");
  auto table = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "8GiB", "--ram", "16GiB"});
  ASSERT_EQ(table.code, 0);
  // The verdict is the first line.
  EXPECT_TRUE(table.out.starts_with("fits with offload on 1 x 8.00 GiB GPU: ")) << table.out;
}

TEST(FitCliTest, BadInputIsOneLineAndExitOne) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"fit", "meta-llama/Llama-3.1-8B", "--gpu", "mi300"},
           {"fit", "meta-llama/Llama-3.1-8B", "--gpu", "voodoo5"},
           {"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--ram", "lots"},
           {"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--reserve", "lots"},
           {"gpus", "--vendor", "3dfx"}}) {
    auto r = RunMemfit(args);
    EXPECT_EQ(r.code, 1) << args.back();
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("memfit: error: ")) << r.err;
  }
}

// --task inference and train take their runtime bytes from the estimators: the KV cache travels
// with each decoder layer, so a longer context needs more memory and can stop fitting.
TEST(FitCliTest, InferenceAndTrainTasksAreConnected) {
  auto short_ctx = RunMemfit({"fit", "meta-llama/Llama-3.1-8B",
                              "--gpu", "h100", "--task", "inference",
                           "--context", "4096", "--format", "json"});
  ASSERT_EQ(short_ctx.code, 0) << short_ctx.err;
  auto j = nlohmann::json::parse(short_ctx.out);
  // Llama-3.1-8B: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 128 KiB per token;
  // 4096 tokens = 512 MiB over 32 layers = 16 MiB per layer.
  EXPECT_EQ(j["runtime"]["per_layer_bytes"], 16u << 20);
  EXPECT_GT(j["runtime"]["per_gpu_bytes"], 0u);
  auto train = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--task", "train",
                       "--format", "json"});
  ASSERT_EQ(train.code, 0) << train.err;
  auto t = nlohmann::json::parse(train.out);
  EXPECT_GT(t["runtime"]["per_weight_byte"].get<double>(), 1.0);
}

// Full fine-tuning of an 8B model needs ~16 B/param: not on a 24 GiB card. The advice offers
// LoRA (16-bit base) and QLoRA (NF4 base), and QLoRA's total is the smaller: its base weights
// are 4.127 bits per block-linear weight instead of 16.
TEST(FitCliTest, KvDtypeSetsTheCacheAndEngineOnlyOptionsAreRefused) {
  // Llama-3.1-8B on an RTX 4090: an fp8 KV cache (1 byte per element instead of 2) holds more
  // context than the bf16 one, and the fp8 advice is not offered twice.
  auto bf16 = RunMemfit({"fit", "meta-llama/Llama-3.1-8B",
                         "--gpu", "rtx4090", "--task", "inference",
                      "--format", "json"});
  auto fp8 = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "rtx4090", "--task", "inference",
                     "--kv-dtype", "fp8", "--format", "json"});
  ASSERT_EQ(bf16.code, 0) << bf16.err;
  ASSERT_EQ(fp8.code, 0) << fp8.err;
  auto a = nlohmann::json::parse(bf16.out);
  auto b = nlohmann::json::parse(fp8.out);
  const uint64_t ctx_bf16 = a["limits"]["max_context_tokens"].get<uint64_t>();
  const uint64_t ctx_fp8 = b["limits"]["max_context_tokens"].get<uint64_t>();
  // Not twice as long: the prefill activations grow with the context too (128 KiB of bf16 KV per
  // token becomes 64 KiB; the activation peak per token stays).
  EXPECT_EQ(ctx_bf16, 34349u);
  EXPECT_GT(ctx_fp8, ctx_bf16 + ctx_bf16 / 4);
  for (const auto& advice : b["advice"]) EXPECT_NE(advice["action"], "KV cache in fp8");
  // Re-quantization and a KV dtype outside --task inference would be ignored: refused instead.
  auto quant = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "rtx4090", "--quant", "fp8"});
  EXPECT_EQ(quant.code, 1);
  EXPECT_NE(quant.err.find("re-quantization is planned with --engine"), std::string::npos) << quant.err;
  auto load_kv = RunMemfit({"fit", "meta-llama/Llama-3.1-8B",
                            "--gpu", "rtx4090", "--kv-dtype", "fp8"});
  EXPECT_EQ(load_kv.code, 1);
  EXPECT_NE(load_kv.err.find("part of --task inference only"), std::string::npos) << load_kv.err;
}

TEST(FitCliTest, TrainingAdviceOffersLoraAndQlora) {
  auto r = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "rtx4090", "--task", "train",
                   "--context", "1024", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "does not fit");
  const nlohmann::json* lora = nullptr;
  const nlohmann::json* qlora = nullptr;
  for (const auto& a : j["advice"]) {
    const std::string action = a["action"];
    if (action.starts_with("LoRA")) lora = &a;
    if (action.starts_with("QLoRA")) qlora = &a;
  }
  ASSERT_NE(lora, nullptr) << j["advice"].dump();
  ASSERT_NE(qlora, nullptr) << j["advice"].dump();
  EXPECT_EQ((*qlora)["verdict"], "fits");
  // The NF4 base saves ~9.6 GiB: 6.98B block-linear weights at 4.127 instead of 16 bits.
  // bitsandbytes >= 0.43.2 keeps no input of its 4-bit matmuls, so QLoRA saves what LoRA saves
  // (plus one dequantized weight at a time, at most 14336 x 4096 x 2 B = 112 MiB): at least
  // 9 GiB smaller in all.
  EXPECT_GT((*lora)["total_bytes"].get<uint64_t>(),
            (*qlora)["total_bytes"].get<uint64_t>() + (uint64_t{9} << 30));
}

TEST(FitCliTest, GpusFilters) {
  auto r = RunMemfit({"gpus", "--vendor", "amd", "--min-memory", "192GiB", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "memfit.gpus/1");
  // MI355X, MI350X (288), MI325X (256), MI300X (192).
  ASSERT_EQ(j["gpus"].size(), 4u);
  for (const auto& g : j["gpus"]) {
    EXPECT_EQ(g["vendor"], "amd");
    EXPECT_GE(g["memory_bytes"].get<uint64_t>(), 192ull << 30);
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
