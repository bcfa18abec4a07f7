// --engine-version end to end (memfit/engine_release.h): `memfit inference` and `memfit fit
// --engine` through memfit::cli::Run and RunApi, on a catalog model (offline).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/llamacpp_answer.h"
#include "cli_run.h"
#include "memfit/api.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::RunMemfit;
using testing::RunResult;

nlohmann::json Inference(std::vector<std::string> extra) {
  std::vector<std::string> args = {"inference", "meta-llama/Llama-3.1-8B", "--gpu", "h100",
                                   "--context", "8192", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  RunResult r = RunMemfit(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

// The default vLLM release (0.31): gpu_memory_utilization 0.92, on an 80 GiB H100 1024 sequences
// and 16384 batched tokens, CUDA graphs inside the budget: requested = 85899345920 x 0.92 =
// 79027398246 (floored), the total is the budget alone, and the pool is what the budget leaves
// after weights, the profile run's activations, non-torch 70 MiB and CUDA graphs 650 MiB.
TEST(EngineReleaseCli, VllmDefaultIsTheNewestRelease) {
  auto j = Inference({"--engine", "vllm"});
  ASSERT_TRUE(j.contains("engine_release"));
  const auto& g = j["engine_release"];
  EXPECT_EQ(g["engine"], "vllm");
  EXPECT_EQ(g["version"], "0.31");
  EXPECT_EQ(g["gpu_memory_utilization"], 0.92);
  EXPECT_EQ(g["max_num_seqs"], 1024);
  EXPECT_EQ(g["max_batched_tokens"], 16384);
  EXPECT_EQ(g["cuda_graphs_in_budget"], true);
  const uint64_t requested = 79027398246u;
  EXPECT_EQ(j["serving"]["requested"], requested);
  EXPECT_EQ(j["per_gpu"]["total"], requested);
  const uint64_t non_kv = j["per_gpu"]["weights"].get<uint64_t>() +
                          j["per_gpu"]["activations"].get<uint64_t>() + (uint64_t{70} << 20) +
                          (uint64_t{650} << 20);
  EXPECT_EQ(j["serving"]["non_kv"], non_kv);
  EXPECT_EQ(j["serving"]["kv_pool"], requested - non_kv);
  EXPECT_EQ(g["equivalent_flags"],
            "--gpu-memory-utilization 0.92 --max-num-seqs 1024 --max-num-batched-tokens 16384 "
            "(or --kv-cache-memory-bytes " + std::to_string(requested - non_kv) + ")");
  EXPECT_NE(j["activation_peak_at"].get<std::string>().find("16384 tokens"), std::string::npos);
}

// vLLM 0.10: 0.9 and 8192 batched tokens on the H100, CUDA graphs on top of the budget:
// 85899345920 x 0.9 = 77309411328, total 77309411328 + 650 MiB (681574400) = 77990985728.
TEST(EngineReleaseCli, AnOlderVllmRelease) {
  auto j = Inference({"--engine", "vllm", "--engine-version", "v0.10.2"});
  const auto& g = j["engine_release"];
  EXPECT_EQ(g["version"], "0.10");
  EXPECT_EQ(g["gpu_memory_utilization"], 0.9);
  EXPECT_EQ(g["max_batched_tokens"], 8192);
  EXPECT_EQ(g["cuda_graphs_in_budget"], false);
  EXPECT_EQ(j["serving"]["requested"], 77309411328u);
  EXPECT_EQ(j["per_gpu"]["total"], 77990985728u);
  // A given value still wins over the release's.
  auto given = Inference({"--engine", "vllm", "--engine-version", "0.10",
                          "--gpu-memory-utilization", "0.8", "--max-batched-tokens", "4096"});
  EXPECT_EQ(given["engine_release"]["gpu_memory_utilization"], 0.8);
  EXPECT_EQ(given["engine_release"]["max_batched_tokens"], 4096);
}

// SGLang on the 80 GiB H100 (tp 1, Llama-3.1-8B): mem_fraction_static 0.830 in the newest release
// (0.5.14 on: 464 MiB for the prefill CUDA graphs), 0.836 in 0.5 (docs/estimates.md, worked there
// and in engine_release_test.cc); requested = 85899345920 x 0.830 = 71296457113 and x 0.836 =
// 71811853189 (floored).
TEST(EngineReleaseCli, SglangFractionFromTheGpu) {
  auto j = Inference({"--engine", "sglang"});
  const auto& g = j["engine_release"];
  EXPECT_EQ(g["version"], "0.5.14");
  EXPECT_DOUBLE_EQ(g["gpu_memory_utilization"].get<double>(), 0.830);
  EXPECT_EQ(g["max_batched_tokens"], 8192);  // chunked_prefill_size
  EXPECT_EQ(j["serving"]["requested"], 71296457113u);
  EXPECT_EQ(g["equivalent_flags"], "--mem-fraction-static 0.830 --chunked-prefill-size 8192");
  auto old = Inference({"--engine", "sglang", "--engine-version", "0.5.6"});
  EXPECT_EQ(old["engine_release"]["version"], "0.5");
  EXPECT_DOUBLE_EQ(old["engine_release"]["gpu_memory_utilization"].get<double>(), 0.836);
  EXPECT_EQ(old["serving"]["requested"], 71811853189u);
}

// A multimodal model: SGLang scales its fraction by adjust_mem_fraction_for_vlm's factor. LLaVA
// 1.6's vision_config is CLIP ViT-L/14 (24 layers of 1024): 0.95, so 0.836 x 0.95 = 0.7942 on the
// H100 (no prefill CUDA graphs for a multimodal model in 0.5.14). With EAGLE in 0.5, 2 GiB more
// reserved first: 0.811 x 0.95 = 0.77045; 0.5.14 reserves nothing for the draft: 0.7942.
TEST(EngineReleaseCli, SglangScalesAMultimodalModelsFraction) {
  const std::vector<std::string> base = {"inference", "llava-hf/llava-v1.6-mistral-7b-hf", "--gpu",
                                         "h100", "--engine", "sglang", "--format", "json"};
  RunResult r = RunMemfit(base);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["engine_release"]["gpu_memory_utilization"].get<double>(), 0.7942, 1e-12);
  bool said = false;
  for (const auto& a : j["assumptions"]) {
    said = said || a.get<std::string>().starts_with(
                       "SGLang scales a multimodal model's mem_fraction_static by 0.9500 "
                       "(adjust_mem_fraction_for_vlm: a vision_config of 24 layers x 1024 wide");
  }
  EXPECT_TRUE(said) << j["assumptions"].dump();
  std::vector<std::string> eagle = base;
  eagle.insert(eagle.end(), {"--speculative-algorithm", "eagle"});
  r = RunMemfit(eagle);
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["engine_release"]["gpu_memory_utilization"].get<double>(), 0.7942, 1e-12);
  eagle.insert(eagle.end(), {"--engine-version", "0.5"});
  r = RunMemfit(eagle);
  ASSERT_EQ(r.code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["engine_release"]["gpu_memory_utilization"].get<double>(), 0.811 * 0.95, 1e-12);
  // A given fraction is SGLang's as given.
  std::vector<std::string> given = base;
  given.insert(given.end(), {"--mem-fraction-static", "0.8"});
  r = RunMemfit(given);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["engine_release"]["gpu_memory_utilization"], 0.8);
  // Only SGLang's rule is modelled.
  RunResult vllm = RunMemfit({"inference", "meta-llama/Llama-3.1-8B", "--engine", "vllm",
                              "--speculative-algorithm", "EAGLE"});
  EXPECT_EQ(vllm.code, 1);
  EXPECT_EQ(vllm.err, "memfit: error: --speculative-algorithm EAGLE: modelled for SGLang's memory "
                      "rule only (--engine sglang)\n");
}

TEST(EngineReleaseCli, TransformersHasNoRelease) {
  auto j = Inference({});
  EXPECT_TRUE(j["engine_release"].is_null());
}

TEST(EngineReleaseCli, Refusals) {
  RunResult unknown = RunMemfit({"inference", "meta-llama/Llama-3.1-8B", "--engine", "vllm",
                              "--engine-version", "0.12"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_EQ(unknown.err, "memfit: error: --engine-version 0.12: memfit models vLLM 0.10, 0.11 and "
                         "0.31\n");
  RunResult fp8 = RunMemfit({"inference", "meta-llama/Llama-3.1-8B", "--engine", "llama.cpp",
                          "--kv-dtype", "fp8"});
  EXPECT_EQ(fp8.code, 1);
  EXPECT_EQ(fp8.err, "memfit: error: --kv-dtype fp8: llama.cpp has no fp8 KV cache "
                     "(--cache-type-k accepts f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, "
                     "q5_1)\n");
  RunResult bf16 = RunMemfit({"inference", "meta-llama/Llama-3.1-8B", "--engine", "vllm",
                           "--engine-version", "0.10", "--kv-dtype", "bfloat16"});
  EXPECT_EQ(bf16.code, 1);
  EXPECT_NE(bf16.err.find("--kv-dtype bfloat16: vLLM 0.10 has no bfloat16 KV cache"),
            std::string::npos) << bf16.err;
  RunResult fit = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--gpu", "h100", "--engine-version",
                          "0.11"});
  EXPECT_EQ(fit.code, 1);
  EXPECT_NE(fit.err.find("--engine-version 0.11"), std::string::npos) << fit.err;
  // The API answers the same refusal as 422.
  ApiReply api = RunApi("inference", R"({"model": "meta-llama/Llama-3.1-8B", "engine": "vllm",
                                        "engine-version": "0.12"})");
  EXPECT_EQ(api.status, 422);
  EXPECT_NE(api.body.find("--engine-version 0.12"), std::string::npos) << api.body;
}

// --kv-dtype on llama.cpp's path is its --cache-type-k/-v (common/arg.cpp kv_cache_types): int8 is
// q8_0, int4 q4_0, float16 f16; "model" keeps llama.cpp's default f16.
TEST(EngineReleaseCli, LlamaCppCacheTypesFromKvDtype) {
  InferenceRequest r;
  r.kv_dtype = "int8";
  EXPECT_EQ(api::LlamaCppArgsFor(r).options.cache_type_k, "q8_0");
  EXPECT_EQ(api::LlamaCppArgsFor(r).options.cache_type_v, "q8_0");
  r.kv_dtype = "int4";
  EXPECT_EQ(api::LlamaCppArgsFor(r).options.cache_type_k, "q4_0");
  r.kv_dtype = "bfloat16";
  EXPECT_EQ(api::LlamaCppArgsFor(r).options.cache_type_v, "bf16");
  r.kv_dtype = "model";
  EXPECT_EQ(api::LlamaCppArgsFor(r).options.cache_type_k, "f16");
}

// fit --engine sglang over the catalog's H100 and RTX 4090: each row's fraction is SGLang's for
// that GPU (0.830 on 80 GiB, 0.833 on 24 GiB in 0.5.14, both worked in engine_release_test.cc).
TEST(EngineReleaseCli, FitRowsCarryEachGpusFraction) {
  RunResult h100 = RunMemfit({"fit", "meta-llama/Llama-3.1-8B",
                              "--engine", "sglang", "--gpu", "h100",
                           "--context", "8192", "--format", "json"});
  ASSERT_EQ(h100.code, 0) << h100.err;
  auto j = nlohmann::json::parse(h100.out);
  EXPECT_EQ(j["request"]["engine_version"], "0.5.14");
  EXPECT_TRUE(j["request"]["gpu_memory_utilization"].is_null());
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["rows"][0]["gpu_memory_utilization"].get<double>(), 0.830);
  EXPECT_EQ(j["rows"][0]["engine_flags"], "--mem-fraction-static 0.830 --chunked-prefill-size 8192");
  RunResult rtx = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--engine", "sglang", "--gpu",
                          "rtx4090", "--context", "8192", "--format", "json"});
  ASSERT_EQ(rtx.code == 0 || rtx.code == 1, true) << rtx.err;
  auto r = nlohmann::json::parse(rtx.out);
  ASSERT_EQ(r["rows"].size(), 1u);
  EXPECT_DOUBLE_EQ(r["rows"][0]["gpu_memory_utilization"].get<double>(), 0.833);
  EXPECT_EQ(r["rows"][0]["gpu_memory_bytes"], uint64_t{24} << 30);
  // The text names the release and prints the flags.
  RunResult text = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--engine", "vllm", "--gpu", "h100",
                           "--context", "8192"});
  EXPECT_NE(text.out.find("engine: vllm 0.31"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("--gpu-memory-utilization 0.92"), std::string::npos) << text.out;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
