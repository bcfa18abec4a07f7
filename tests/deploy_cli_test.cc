// `memfit fit --engine`, `--search` and `--all-gpus` end to end through memfit::cli::Run, on a
// catalog model (offline).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "memfit/gpu.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::RunMemfit;
using testing::RunResult;

// Llama-3.1-8B (bf16, untied) on 2 x H100 with vLLM --tp 2: per layer (32) the seven linears
// 2 x (4096^2 + 2 x 1024 x 4096 + 4096^2 + 3 x 14336 x 4096) / 2 = 218103808 and two norms
// 16384 (replicated); embed_tokens and lm_head 128256 / 2 = 64128 rows x 8192 B = 525336576
// each; final norm 8192; rotary inv_freq 256: 32 x 218120192 + 2 x 525336576 + 8448 =
// 8030527744 per GPU.
TEST(DeployCli, OneVllmDeploymentAsJson) {
  auto r = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--engine", "vllm", "--gpu", "2xh100",
                   "--context", "8192", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "memfit.deploy/1");
  EXPECT_EQ(j["mode"], "deployment");
  ASSERT_EQ(j["rows"].size(), 1u);
  const auto& row = j["rows"][0];
  EXPECT_EQ(row["layout"], "tp2");
  EXPECT_EQ(row["gpus"], 2);
  EXPECT_EQ(row["weights_per_gpu_bytes"], 8030527744u);
  EXPECT_EQ(row["verdict"], "fits");
  EXPECT_GT(row["max_sequences"].get<uint64_t>(), 1u);
}

TEST(DeployCli, SearchAndGrid) {
  auto s = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--engine", "sglang", "--gpu", "h100",
                   "--search", "--context", "8192", "--batch", "4", "--format", "json"});
  ASSERT_EQ(s.code, 0) << s.err;
  auto sj = nlohmann::json::parse(s.out);
  EXPECT_EQ(sj["mode"], "search");
  ASSERT_FALSE(sj["rows"].empty());
  EXPECT_EQ(sj["rows"][0]["gpus"], 1);  // 16 GB of weights: one 80 GiB GPU holds 4 x 8192
  EXPECT_EQ(sj["rows"][0]["verdict"], "fits");
  auto g = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--task", "inference", "--all-gpus",
                   "--format", "json"});
  ASSERT_EQ(g.code, 0) << g.err;
  auto gj = nlohmann::json::parse(g.out);
  EXPECT_EQ(gj["mode"], "grid");
  EXPECT_EQ(gj["rows"].size(), GpuCatalog().size() * 4);
  EXPECT_EQ(gj["rows"][0]["verdict"], "fits");
  auto table = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--engine", "vllm", "--gpu", "h100"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("max seqs"), std::string::npos);
  auto llama = RunMemfit({"fit", "meta-llama/Llama-3.1-8B", "--engine", "vllm"});
  EXPECT_NE(llama.code, 0);
  EXPECT_NE(llama.err.find("--gpu"), std::string::npos);
}

// The command on the real DeepSeek-V3 config (skipped without ../shared/eval): FP8 as
// stored on 8 x H200 with vLLM TP 8 serves 5 sequences of 131072 tokens (the derivation is in
// tests/deploy_test.cc, DeployRealConfigs.DeepSeekV3Fp8OnEightH200WithVllm), through
// `inference --gpu` and through `fit --engine`.
TEST(DeployCli, DeepSeekV3AsStoredThroughBothCommands) {
  auto eval = testing::EvalDir();
  if (!eval) GTEST_SKIP() << "../shared/eval is absent: skipped";
  const std::string dir = *eval + "/models/deepseek-ai__DeepSeek-V3";
  auto i = RunMemfit({"inference", dir, "--engine", "vllm", "--tp", "8", "--gpu", "h200",
                   "--context", "131072", "--format", "json"});
  ASSERT_EQ(i.code, 0) << i.err;
  auto ij = nlohmann::json::parse(i.out);
  EXPECT_EQ(ij["settings"]["quant"], "stored");
  EXPECT_EQ(ij["settings"]["compute_capability"], 90);
  EXPECT_EQ(ij["weights"]["stored_format"], "fp8-block");
  EXPECT_EQ(ij["per_gpu"]["weights"], 85140130976u);
  EXPECT_EQ(ij["serving"]["max_concurrency"], 5);
  auto f = RunMemfit({"fit", dir, "--engine", "vllm", "--gpu", "8xh200", "--context", "131072",
                   "--format", "json"});
  ASSERT_EQ(f.code, 0) << f.err;
  auto fj = nlohmann::json::parse(f.out);
  EXPECT_EQ(fj["rows"][0]["weights_per_gpu_bytes"], 85140130976u);
  EXPECT_EQ(fj["rows"][0]["max_sequences"], 5);
  // --quant none: the bfloat16 weights do not leave room for one sequence.
  auto bf16 = RunMemfit({"fit", dir, "--engine", "vllm", "--gpu", "8xh200", "--context", "131072",
                      "--quant", "none", "--format", "json"});
  ASSERT_EQ(bf16.code, 0) << bf16.err;
  EXPECT_EQ(nlohmann::json::parse(bf16.out)["rows"][0]["verdict"], "does not fit");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
