// `memfit inference` (cli/inference_command.cc): flags reach the estimate, the default context,
// and GGUF models go to the llama.cpp estimator. GPT-2 small from the catalog: 12 layers, 12
// heads of 64 (768 wide), 1,024 positions (its published config).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

#include "cli/command_test_util.h"
#include "gguf_models.h"  // tests/

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using cli_test::RunMemfit;
using InferenceCommandTest = cli_test::Gpt2Test;

TEST_F(InferenceCommandTest, FlagsReachTheEstimate) {
  ASSERT_TRUE(RunJson(Gpt2("inference", {"--context", "512", "--batch", "2", "--format", "json"}),
                      "memfit.inference/1"));
  EXPECT_TRUE(cli_test::JsonHas(
      j,
      {{"settings", {{"context", 512}, {"batch", 2}, {"dtype", "bfloat16"}}},
       {"model_max_context", 1024},
       // K and V of 768 bf16 values per layer and token: 12 x 2 x 768 x 2 B = 36,864 B per
       // token; 2 sequences x 512 tokens x 36,864 B = 37,748,736 B.
       {"kv_bytes_per_token", 36864},
       {"per_gpu", {{"kv_cache", 37748736}}}}));
  // --kv-dtype fp8 halves it: 1 B per value.
  ASSERT_TRUE(RunJson(Gpt2("inference", {"-c", "512", "--batch", "2", "--kv-dtype", "fp8",
                                          "--format", "json"}),
                      "memfit.inference/1"));
  EXPECT_EQ(j["per_gpu"]["kv_cache"], 18874368);
}

TEST_F(InferenceCommandTest, BadWordsAreOneLineNamingTheFlag) {
  auto dtype = RunMemfit(Gpt2("inference", {"--dtype", "float7"}));
  EXPECT_EQ(dtype.code, 1);
  EXPECT_TRUE(dtype.err.starts_with("memfit: error: --dtype")) << dtype.err;
  EXPECT_EQ(std::count(dtype.err.begin(), dtype.err.end(), '\n'), 1) << dtype.err;
  auto format = RunMemfit(Gpt2("inference", {"--format", "xml"}));
  EXPECT_EQ(format.code, 1);
  EXPECT_NE(format.err.find("--format"), std::string::npos) << format.err;
}

TEST_F(InferenceCommandTest, AGgufModelGoesToTheLlamaCppEstimator) {
  testing::GgufShape s;  // 2 layers, 4 KV heads x 64, context 4096
  const std::string path = testing::TempDir() + "/tiny.gguf";
  std::ofstream(path, std::ios::binary) << testing::MakeGgufWriter(s).Build();
  auto r = RunMemfit({"inference", path, "--context", "1024", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // llama.cpp's JSON: 2 layers x 1,024 cells x 256 K elements x 2 B (f16) = 1,048,576 B.
  EXPECT_EQ(j["n_ctx"], 1024);
  EXPECT_EQ(j["kv_k_bytes"], 1048576);
  EXPECT_FALSE(j.contains("schema"));
  // The same bytes as `memfit gguf inference` for the same flags.
  auto gguf = RunMemfit({"gguf", "inference", path, "--context", "1024", "--format", "json"});
  EXPECT_EQ(gguf.out, r.out);
}

// --new-tokens: generate()'s prompt / generated split. GPT-2 at 1,024 tokens with 512 new ones
// prefills 512 tokens: the same cache at the end, a smaller peak; refused where it cannot apply.
TEST_F(InferenceCommandTest, NewTokensSplitTheContext) {
  auto run = [](std::vector<std::string> extra) {
    std::vector<std::string> flags = {"--context", "1024", "--attn", "eager", "--format", "json"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    return RunMemfit(Gpt2("inference", flags));
  };
  auto whole = run({});
  auto split = run({"--new-tokens", "512"});
  ASSERT_EQ(whole.code, 0) << whole.err;
  ASSERT_EQ(split.code, 0) << split.err;
  const auto w = nlohmann::json::parse(whole.out), s = nlohmann::json::parse(split.out);
  EXPECT_EQ(s["settings"]["new_tokens"], 512);
  EXPECT_EQ(w["settings"]["new_tokens"], 0);
  EXPECT_EQ(s["per_gpu"]["kv_cache"], w["per_gpu"]["kv_cache"]);
  EXPECT_LT(s["total_bytes"].get<uint64_t>(), w["total_bytes"].get<uint64_t>());
  // Refused: as many new tokens as the context, a serving engine, an encoder-decoder model.
  auto all = run({"--new-tokens", "1024"});
  EXPECT_EQ(all.code, 1);
  EXPECT_NE(all.err.find("--new-tokens 1024: must be less than --context 1024"), std::string::npos)
      << all.err;
  auto vllm = run({"--new-tokens", "16", "--engine", "vllm", "--gpu", "h100"});
  EXPECT_EQ(vllm.code, 1);
  EXPECT_NE(vllm.err.find("--new-tokens 16: "), std::string::npos) << vllm.err;
  auto t5 = RunMemfit({"inference", "google-t5/t5-small", "--offline", "--new-tokens", "8"});
  EXPECT_EQ(t5.code, 1);
  EXPECT_NE(t5.err.find("encoder-decoder"), std::string::npos) << t5.err;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
