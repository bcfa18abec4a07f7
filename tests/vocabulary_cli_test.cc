// One vocabulary across commands (docs/cli.md, "Shared vocabulary"): --context (-c, --ctx-size,
// --ctx), --batch as sequences, --gpu and --gpus, with old spellings deprecated; and `memfit
// inference X.gguf` answering exactly as `memfit gguf inference X.gguf` for the same flags.

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "gguf_models.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using testing::RunMemfit;

std::string TinyGguf() {
  testing::GgufShape s;  // 2 layers, 256 hidden, F16
  const std::string path = testing::TempDir() + "/vocabulary.gguf";
  std::ofstream(path, std::ios::binary) << testing::MakeGgufWriter(s).Build();
  return path;
}

nlohmann::json Json(const testing::RunResult& r) {
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

TEST(VocabularyCli, EveryCommandSpellsTheContextTheSameWays) {
  // gpt2's catalog entry: 1024 positions. Every spelling gives byte-identical JSON.
  for (const std::vector<std::string>& base :
       std::vector<std::vector<std::string>>{
           {"inference", "openai-community/gpt2", "--format", "json"},
           {"train", "openai-community/gpt2", "--format", "json"},
           {"fit", "openai-community/gpt2", "--gpu", "rtx4090", "--task", "inference", "--format",
            "json"}}) {
    std::string first;
    for (const std::vector<std::string>& spelling :
         std::vector<std::vector<std::string>>{{"--context", "512"}, {"-c", "512"},
                                               {"--ctx-size", "512"}, {"--ctx", "512"}}) {
      std::vector<std::string> args = base;
      args.insert(args.end(), spelling.begin(), spelling.end());
      args.push_back("--offline");
      auto r = RunMemfit(args);
      ASSERT_EQ(r.code, 0) << base[0] << " " << spelling[0] << ": " << r.err;
      if (first.empty()) first = r.out;
      EXPECT_EQ(r.out, first) << base[0] << " " << spelling[0];
    }
  }
}

// --torch-version and --transformers-version on train and inference (docs/estimates.md,
// "Library versions"): said as an assumption, and they change what is counted.
TEST(VocabularyCli, LibraryVersionsAreInputsAndSaid) {
  auto has = [](const nlohmann::json& j, const std::string& text) {
    for (const auto& a : j["assumptions"]) {
      if (a.get<std::string>().find(text) != std::string::npos) return true;
    }
    return false;
  };
  const std::vector<std::string> inf{"inference", "Qwen/Qwen2.5-0.5B", "--offline", "--format",
                                     "json"};
  auto current = Json(RunMemfit(inf));
  EXPECT_TRUE(has(current, "library versions: torch 2.5, transformers 4.50"));
  // Before transformers 4.45 no class took num_logits_to_keep: every prompt token's logits.
  auto args = inf;
  args.insert(args.end(), {"--transformers-version", "4.44"});
  auto old = Json(RunMemfit(args));
  EXPECT_TRUE(has(old, "transformers 4.44: the qwen2 class computes logits for every prompt"));
  EXPECT_GT(old["total_bytes"].get<uint64_t>(), current["total_bytes"].get<uint64_t>());
  // torch 1.13 keeps the gradients through the next forward (zero_grad's default) and
  // transformers 4.48 copies the shifted logits (of more than one sequence: one sequence's
  // slice is contiguous): a larger training peak.
  const std::vector<std::string> tr{"train", "Qwen/Qwen2.5-0.5B", "--offline", "--context",
                                    "512", "--batch", "2", "--format", "json"};
  auto train_now = Json(RunMemfit(tr));
  args = tr;
  args.insert(args.end(), {"--torch-version", "1.13.1", "--transformers-version", "4.48"});
  auto train_old = Json(RunMemfit(args));
  EXPECT_TRUE(has(train_old, "library versions: torch 1.13, transformers 4.48"));
  EXPECT_TRUE(has(train_old, "copies the shifted logits"));
  EXPECT_GT(train_old["total_bytes"].get<uint64_t>(), train_now["total_bytes"].get<uint64_t>());
  auto bad = RunMemfit({"train", "Qwen/Qwen2.5-0.5B", "--offline", "--torch-version", "2"});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("--torch-version 2: expected a version major.minor"), std::string::npos)
      << bad.err;
}

TEST(VocabularyCli, TheDefaultContextIsChosenOnceAndSaid) {
  // gpt2: 1024 positions, below both caps: inference, train and fit all take 1024.
  auto inf = Json(RunMemfit({"inference", "openai-community/gpt2", "--offline", "--format", "json"}));
  EXPECT_EQ(inf["settings"]["context"], 1024);
  bool said = false;
  for (const auto& a : inf["assumptions"]) said = said || a.get<std::string>().starts_with("context: 1024 tokens");
  EXPECT_TRUE(said) << inf["assumptions"].dump();
  auto explicit_inf = Json(RunMemfit(
      {"inference", "openai-community/gpt2", "--offline", "--context", "1024", "--format", "json"}));
  EXPECT_EQ(explicit_inf["per_gpu"], inf["per_gpu"]);
  auto train = Json(RunMemfit({"train", "openai-community/gpt2", "--offline", "--format", "json"}));
  auto train_1024 = Json(RunMemfit(
      {"train", "openai-community/gpt2", "--offline", "--context", "1024", "--format", "json"}));
  EXPECT_EQ(train["total_bytes"], train_1024["total_bytes"]);
  EXPECT_EQ(train["settings"]["seq"], 1024);
}

TEST(VocabularyCli, OldSpellingsKeepWorkingWithANote) {
  auto old = RunMemfit({"train", "openai-community/gpt2", "--offline", "--seq", "256", "--format", "json"});
  ASSERT_EQ(old.code, 0) << old.err;
  EXPECT_NE(old.err.find("memfit: --seq is deprecated: use --context"), std::string::npos) << old.err;
  auto now = RunMemfit({"train", "openai-community/gpt2", "--offline", "--context", "256", "--format", "json"});
  EXPECT_EQ(old.out, now.out);
  EXPECT_EQ(now.err.find("deprecated"), std::string::npos);
  auto micro = RunMemfit({"train", "openai-community/gpt2", "--offline", "--micro-batch", "2", "--format", "json"});
  auto batch = RunMemfit({"train", "openai-community/gpt2", "--offline", "--batch", "2", "--format", "json"});
  EXPECT_EQ(micro.out, batch.out);
}

TEST(VocabularyCli, GpuAndGpusEverywhere) {
  // fit: --gpus N of one --gpu kind is --gpu NxKIND.
  auto counted = RunMemfit({"fit", "openai-community/gpt2", "--offline", "--gpu", "rtx4090", "--gpus", "2", "--format", "json"});
  auto spelled = RunMemfit({"fit", "openai-community/gpt2", "--offline", "--gpu", "2xrtx4090", "--format", "json"});
  ASSERT_EQ(counted.code, 0) << counted.err;
  EXPECT_EQ(counted.out, spelled.out);
  auto two_kinds = RunMemfit({"fit", "openai-community/gpt2", "--offline", "--gpu", "rtx4090", "--gpu", "a100", "--gpus", "2"});
  EXPECT_EQ(two_kinds.code, 1);
  EXPECT_NE(two_kinds.err.find("--gpus 2: give exactly one --gpu kind"), std::string::npos) << two_kinds.err;
  // inference: --gpus N is --tp N (dp = pp = 1).
  auto gpus = RunMemfit({"inference", "openai-community/gpt2", "--offline", "--gpus", "2", "--format", "json"});
  auto tp = RunMemfit({"inference", "openai-community/gpt2", "--offline", "--tp", "2", "--format", "json"});
  ASSERT_EQ(gpus.code, 0) << gpus.err;
  EXPECT_EQ(gpus.out, tp.out);
  // train: --gpu's verdict says whether the peak fits one GPU of that kind.
  auto small = Json(RunMemfit({"train", "openai-community/gpt2", "--offline", "--gpu", "1GiB", "--format", "json"}));
  auto big = Json(RunMemfit({"train", "openai-community/gpt2", "--offline", "--gpu", "h100", "--format", "json"}));
  EXPECT_EQ(small["verdict"]["verdict"], "does not fit") << small["verdict"].dump();
  EXPECT_EQ(big["verdict"]["verdict"], "fits") << big["verdict"].dump();
}

TEST(VocabularyCli, InferenceOnAGgufFileIsGgufInference) {
  const std::string path = TinyGguf();
  for (const std::vector<std::string>& flags :
       std::vector<std::vector<std::string>>{{},
                                             {"--context", "1024"},
                                             {"-c", "512", "--batch", "2"},
                                             {"--gpu", "8GiB"}}) {
    std::vector<std::string> a = {"inference", path, "--format", "json"};
    std::vector<std::string> b = {"gguf", "inference", path, "--format", "json"};
    a.insert(a.end(), flags.begin(), flags.end());
    b.insert(b.end(), flags.begin(), flags.end());
    auto x = RunMemfit(a);
    auto y = RunMemfit(b);
    ASSERT_EQ(x.code, 0) << x.err;
    ASSERT_EQ(y.code, 0) << y.err;
    EXPECT_EQ(x.out, y.out) << (flags.empty() ? "(no flags)" : flags.front());
  }
  // --batch is sequences in both (llama.cpp --parallel), and gguf says so.
  auto batch = RunMemfit({"gguf", "inference", path, "--batch", "2", "--format", "json"});
  auto parallel = RunMemfit({"gguf", "inference", path, "--parallel", "2", "--format", "json"});
  EXPECT_EQ(batch.out, parallel.out);
  EXPECT_NE(batch.err.find("--batch counts sequences"), std::string::npos) << batch.err;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
