// End-to-end checks of the CLI through memfit::cli::Run: inputs resolved in the documented order,
// the accelerate table, and bad input giving a one-line error naming the file, exit code 1.

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "memfit/architecture.h"
#include "memfit/catalog.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

namespace fs = std::filesystem;

struct RunResult {
  int code;
  std::string out, err;
};

RunResult RunMemfit(std::vector<std::string> args) {
  std::ostringstream out, err;
  int code = cli::Run(args, out, err);
  return {code, out.str(), err.str()};
}

void Write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// A two-layer llama-shaped config small enough to count by hand (see LlamaTinyCounts).
const char* kTinyLlama = R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
  "torch_dtype": "float16", "vocab_size": 32, "hidden_size": 8, "intermediate_size": 16,
  "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
  "tie_word_embeddings": false})";

void ExpectOneLineError(const RunResult& r, const std::string& fragment) {
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
}

TEST(Cli, CatalogModelAccelerateTableForBertBaseCased) {
  if (!FindCatalogEntry("bert-base-cased") || !FindArchitectureBuilder("bert", "BertForMaskedLM")) {
    GTEST_SKIP() << "bert-base-cased is not in the catalog or has no builder yet";
  }
  auto r = RunMemfit({"estimate-memory", "bert-base-cased", "--accelerate"});
  ASSERT_EQ(r.code, 0) << r.err;
  // accelerate's documented figures for bert-base-cased (docs/estimates.md, reference note).
  EXPECT_NE(r.out.find("│float32│   86.47 MB  │413.18 MB │      1.61 GB      │"), std::string::npos)
      << r.out;
}

TEST(Cli, LocalDirectoryWithConfigOnly) {
  fs::path dir = testing::TempDir();
  Write(dir / "config.json", kTinyLlama);
  auto r = RunMemfit({"estimate-memory", dir.string(), "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // head_dim = 8 / 2 = 4. embed 32x8 = 256; per layer: norm 8 + q 8x8 = 64 + k 4x8 = 32 +
  // v 32 + o 64 + gate 16x8 = 128 + up 128 + down 8x16 = 128 + norm 8 = 592; final norm 8;
  // lm_head 32x8 = 256. Total 256 + 2 x 592 + 8 + 256 = 1704 parameters, float16.
  EXPECT_EQ(j["parameters"], 1704);
  EXPECT_EQ(j["stored_bytes"], 1704 * 2);
  // Resident adds the rotary inv_freq buffer: head_dim 4 / 2 = 2 float32 values.
  EXPECT_EQ(j["resident_bytes"], 1704 * 2 + 8);
}

TEST(Cli, SafetensorsHeadersAreExactAndConfigGivesStructure) {
  fs::path dir = testing::TempDir();
  Write(dir / "config.json", kTinyLlama);
  Write(dir / "model.safetensors",
        testing::MakeSafetensors({{"model.embed_tokens.weight", "F16", {32, 8}},
                                  {"lm_head.weight", "F16", {32, 8}},
                                  {"extra.weight", "F32", {3}}}));
  auto r = RunMemfit({"estimate-memory", dir.string(), "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stored_bytes"], 32 * 8 * 2 * 2 + 12);
  EXPECT_EQ(j["head_parameters"], 256);
  bool noted = false;
  for (const auto& n : j["notes"]) noted |= n.get<std::string>().find("not part of") != std::string::npos;
  EXPECT_TRUE(noted) << j["notes"];
}

TEST(Cli, HfCacheSnapshotAtRevision) {
  fs::path cache = testing::TempDir();
  fs::path repo = cache / "models--acme--tiny";
  Write(repo / "refs" / "main", "0123456789abcdef0123456789abcdef01234567\n");
  Write(repo / "snapshots" / "0123456789abcdef0123456789abcdef01234567" / "config.json", kTinyLlama);
  setenv("HF_HUB_CACHE", cache.c_str(), 1);
  auto r = RunMemfit({"estimate-memory", "acme/tiny", "--format", "json"});
  auto missing = RunMemfit({"estimate-memory", "acme/tiny", "--revision", "v2", "--offline"});
  unsetenv("HF_HUB_CACHE");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["parameters"], 1704);
  EXPECT_NE(missing.code, 0);
}

TEST(Cli, BadInputIsOneLineWithExitCode1) {
  fs::path dir = testing::TempDir();
  ExpectOneLineError(RunMemfit({"estimate-memory", (dir / "nothing-here").string() + "/x"}),
                     "not found");
  fs::create_directories(dir / "empty");
  ExpectOneLineError(RunMemfit({"estimate-memory", (dir / "empty").string()}), "nothing usable");
  std::string file = testing::MakeSafetensors({{"a", "F32", {16}}});
  Write(dir / "trunc" / "model.safetensors", file.substr(0, file.size() - 10));
  ExpectOneLineError(RunMemfit({"estimate-memory", (dir / "trunc").string()}), "model.safetensors");
  Write(dir / "big.safetensors", std::string("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10));
  ExpectOneLineError(RunMemfit({"estimate-memory", (dir / "big.safetensors").string()}),
                     "exceeds the limit");
  Write(dir / "badjson" / "config.json", "{\"model_type\": ");
  ExpectOneLineError(RunMemfit({"estimate-memory", (dir / "badjson").string()}), "config.json");
  Write(dir / "unknown" / "config.json", R"({"model_type": "frobnicator"})");
  ExpectOneLineError(RunMemfit({"estimate-memory", (dir / "unknown").string()}),
                     "model_type \"frobnicator\" has no exact builder");
  Write(dir / "missing" / "config.json", R"({"model_type": "llama", "vocab_size": 10})");
  ExpectOneLineError(RunMemfit({"estimate-memory", (dir / "missing").string()}),
                     "missing required field \"hidden_size\"");
  Write(dir / "absurd" / "config.json",
        R"({"model_type": "llama", "vocab_size": 4294967296, "hidden_size": 4294967296,
            "intermediate_size": 4, "num_hidden_layers": 1, "num_attention_heads": 1})");
  ExpectOneLineError(RunMemfit({"estimate-memory", (dir / "absurd").string()}), "overflows");
  Write(dir / "wrongtype" / "config.json",
        R"({"model_type": "llama", "vocab_size": "many", "hidden_size": 8})");
  ExpectOneLineError(RunMemfit({"estimate-memory", (dir / "wrongtype").string()}),
                     "\"vocab_size\" must be a non-negative integer, got string");
  Write(dir / "dup" / "model.safetensors",
        testing::MakeSafetensorsRaw(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", 8));
  ExpectOneLineError(RunMemfit({"estimate-memory", (dir / "dup").string()}), "duplicate tensor");
}

TEST(Cli, UsageErrorsExit2) {
  EXPECT_EQ(RunMemfit({"estimate-memory"}).code, 2);
  EXPECT_EQ(RunMemfit({"no-such-command"}).code, 2);
  EXPECT_EQ(RunMemfit({"estimate-memory", "x", "--formt", "yaml"}).code, 2);  // unknown flag
  EXPECT_EQ(RunMemfit({"estimate-memory", "x", "--format"}).code, 2);          // flag without value
  EXPECT_EQ(RunMemfit({"estimate-memory", "x", "--format", "yaml"}).code, 1);  // refused value
}

TEST(Cli, ShardedDirectoryComparesIndexTotalSize) {
  fs::path dir = testing::TempDir();
  Write(dir / "model-00001-of-00002.safetensors", testing::MakeSafetensors({{"a.weight", "BF16", {4, 4}}}));
  Write(dir / "model-00002-of-00002.safetensors", testing::MakeSafetensors({{"b.weight", "BF16", {2}}}));
  Write(dir / "model.safetensors.index.json",
        R"({"metadata": {"total_size": 40}, "weight_map": {"a.weight": "model-00001-of-00002.safetensors", "b.weight": "model-00002-of-00002.safetensors"}})");
  auto r = RunMemfit({"estimate-memory", dir.string(), "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stored_bytes"], 36);
  bool mismatch = false;
  for (const auto& n : j["notes"]) mismatch |= n.get<std::string>().find("total_size 40") != std::string::npos;
  EXPECT_TRUE(mismatch) << "an index that disagrees with the headers must be reported";
  // A missing shard is an error naming the directory.
  fs::remove(dir / "model-00002-of-00002.safetensors");
  ExpectOneLineError(RunMemfit({"estimate-memory", dir.string()}), "1 of 2 shards");
}

TEST(Cli, InspectAndModels) {
  fs::path dir = testing::TempDir();
  Write(dir / "config.json", kTinyLlama);
  auto r = RunMemfit({"inspect", dir.string(), "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["parameters"], 1704);
  auto models = RunMemfit({"models", "--format", "json"});
  ASSERT_EQ(models.code, 0) << models.err;
  EXPECT_GE(nlohmann::json::parse(models.out).size(), 2u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
