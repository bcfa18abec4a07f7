// Every real config in ../shared/eval/recent/ and ../shared/eval/models/ through the CLI as a
// user would run it: `estimate-memory DIR`, and for every text generator `inference --context
// 131072` (transformers and vLLM) and `train --method lora`. No refusal; the figures sane: the
// parameter count within 2% of the count the model's name gives (where it gives one, with the
// listed exceptions), and KV bytes per token derived by hand for one model of each attention
// kind. Skips when the eval folder is absent.

#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "memfit/hf_config.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

namespace fs = std::filesystem;

using testing::RunMemfit;

struct EvalConfig {
  std::string name;
  fs::path dir;
  std::string architecture;
};

// The config folders, listed without reading them (the list is built when the test binary
// starts, for every test process ctest runs).
std::vector<EvalConfig> AllConfigs(const std::string& eval) {
  std::vector<EvalConfig> out;
  for (const char* sub : {"recent", "models"}) {
    if (!fs::exists(fs::path(eval) / sub)) continue;
    for (const auto& entry : fs::directory_iterator(fs::path(eval) / sub)) {
      if (!entry.is_directory() || !fs::exists(entry.path() / "config.json")) continue;
      out.push_back({entry.path().filename().string(), entry.path(), ""});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.dir < b.dir; });
  return out;
}

// architectures[0] of a config folder ("" when unreadable).
std::string Architecture(const EvalConfig& c) {
  auto text = testing::ReadFile((c.dir / "config.json").string());
  if (!text) return "";
  auto config = HfConfig::Parse(*text);
  if (!config || config->architectures().empty()) return "";
  return config->architectures().front();
}

void PrintTo(const EvalConfig& c, std::ostream* os) { *os << c.dir.string(); }

bool IsTextGenerator(const std::string& arch) {
  return arch.ends_with("ForCausalLM") || arch.ends_with("ForConditionalGeneration") ||
         arch.ends_with("LMHeadModel");
}

class AnyConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    auto eval = testing::EvalDir();
    if (!eval) GTEST_SKIP() << "../shared/eval is absent: the real-config sweep needs it";
    configs_ = AllConfigs(*eval);
    setenv("HF_HUB_OFFLINE", "1", 1);
  }
  std::vector<EvalConfig> configs_;
};

// The parameters a model's name states ("Qwen3-235B-A22B" -> 235e9, "gpt-oss-20b" -> 20e9), or 0.
double NamedParameters(const std::string& name) {
  static const std::regex kSize(R"((?:^|[-_])(\d+(?:\.\d+)?)([BbMm])(?:[-_.]|$))");
  std::smatch m;
  if (!std::regex_search(name, m, kSize)) return 0;
  double v = std::stod(m[1].str());
  return v * (m[2].str() == "B" || m[2].str() == "b" ? 1e9 : 1e6);
}

// Names whose stated size is not the parameter count, and why (checked against the model card).
const std::map<std::string, std::string>& NameExceptions() {
  static const std::map<std::string, std::string> k = {
      {"Qwen__Qwen3-1.7B", "the card's 1.7B excludes the 0.31B tied embedding (2.03B in all)"},
      {"Qwen__Qwen3-0.6B", "the card's 0.6B excludes the tied embedding (0.75B in all)"},
      {"Qwen__Qwen3-4B", "the card's 4.0B excludes the tied embedding (4.02B in all: 0.5%)"},
      {"Qwen__Qwen3-8B", "8.19B in all (the card rounds to 8.2B; the id says 8B)"},
      {"Qwen__Qwen3-32B", "32.8B in all (the card says 32.8B; the id says 32B)"},
      {"Qwen__Qwen3-32B-FP8", "32.8B in all (the card says 32.8B; the id says 32B)"},
      {"Qwen__Qwen3-32B-FP8-Static-PerTensor", "32.8B in all (card 32.8B)"},
      {"Qwen__Qwen3-30B-A3B", "30.5B in all (card 30.5B)"},
      {"Qwen__Qwen3-30B-A3B-FP8", "30.5B in all (card 30.5B)"},
      {"Qwen__Qwen3-VL-2B-Instruct", "2.1B with the vision tower"},
      {"Qwen__Qwen3-VL-4B-Instruct", "4.4B with the vision tower"},
      {"Qwen__Qwen3-VL-32B-Instruct", "33.4B with the vision tower"},
      {"Qwen__Qwen3-VL-32B-Thinking", "33.4B with the vision tower"},
      {"Qwen__Qwen3-VL-30B-A3B-Instruct", "31.1B with the vision tower"},
      {"Qwen__Qwen2.5-3B", "3.09B in all (card 3.09B)"},
      {"Qwen__Qwen2.5-7B", "7.61B in all (card 7.61B)"},
      {"Qwen__Qwen2.5-14B", "14.7B in all (card 14.7B)"},
      {"openai__gpt-oss-20b", "20.9B in all (card 21B)"},
      {"openai__gpt-oss-120b", "116.8B in all (card 117B)"},
      {"google__gemma-4-26B-A4B", "25.2B text + vision (card 25.2B)"},
      {"nvidia__Gemma-4-26B-A4B-NVFP4", "25.2B text + vision (card 25.2B)"},
      {"google__gemma-4-31B-it", "30.7B text + vision (card 30.7B)"},
      {"nvidia__Gemma-4-31B-IT-NVFP4", "30.7B text + vision (card 30.7B)"},
      {"meta-llama__Llama-4-Scout-17B-16E-Instruct", "17B is the active count (109B in all)"},
      {"meta-llama__Llama-3.2-1B", "1.24B in all (card 1.23B)"},
      {"meta-llama__Llama-3.2-3B", "3.21B in all (card 3.21B)"},
      {"meta-llama__Llama-3.2-3B-Instruct", "3.21B in all (card 3.21B)"},
      {"microsoft__phi-4", "14.7B in all (card 14.7B)"},
      {"XiaomiMiMo__MiMo-7B-Base", "7.83B exactly with its MTP layer (card 7B; mimo_test.cc)"},
      {"HuggingFaceTB__SmolLM3-3B", "3.08B, equal to the index's total_parameters"},
      {"LGAI-EXAONE__EXAONE-4.0-1.2B-fp16-derived", "1.28B (card: 1.28B)"},
      {"LiquidAI__LFM2-1.2B", "1.17B (card: 1.17B)"},
      {"allenai__olmOCR-7B-0225-preview", "Qwen2-VL-7B: 8.29B with its vision tower (card)"},
      {"nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "31.6B in all (card: 31.6B)"},
      {"nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", "31.6B in all (card: 31.6B)"},
      {"nvidia__NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4", "the Nano shape: 31.6B in all"},
      {"Mayursoni08__LLaVA-NeXT-Video-7B-32K-finetune-bnb4-derived",
       "bnb 4-bit: packed uint8 elements (two weights a byte) are counted, as transformers counts "
       "them after loading; 7.06B logical"},
  };
  return k;
}

// One test per real config (ctest runs them apart, so no single test is slow).
std::vector<EvalConfig> ParamConfigs() {
  auto eval = testing::EvalDir();
  return eval ? AllConfigs(*eval) : std::vector<EvalConfig>{};
}

class EveryConfig : public ::testing::TestWithParam<EvalConfig> {
 protected:
  void SetUp() override { setenv("HF_HUB_OFFLINE", "1", 1); }
};

TEST_P(EveryConfig, AnswersLoadAndForTextGeneratorsInferenceAndTraining) {
  const EvalConfig& c = GetParam();
  auto r = RunMemfit({"estimate-memory", c.dir.string(), "--format", "json"});
  ASSERT_EQ(r.code, 0) << c.name << ": " << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << c.name;
  EXPECT_GT(j.value("stored_bytes", uint64_t{0}), 0u) << c.name;
  // Parameters within 2% of what the name states, where it states a total (not "8x7B" experts)
  // and is not a listed exception.
  // (recent/ only: models/ holds fine-tunes and re-saves whose names are not their size, and its
  // exact counts are checked against params.tsv by the ground-truth tests.)
  const double named = c.dir.parent_path().filename() == "recent" ? NamedParameters(c.name) : 0;
  // NVFP4 releases are counted in packed bytes (two 4-bit weights a byte), like bnb 4-bit and
  // MXFP4: their names state logical counts.
  if (named > 0 && !NameExceptions().count(c.name) && c.name.find("x7B") == std::string::npos &&
      c.name.find("NVFP4") == std::string::npos &&
      c.name.find("x22B") == std::string::npos) {
    const double params = j.value("parameters", 0.0);
    EXPECT_NEAR(params / named, 1.0, 0.02)
        << c.name << ": " << params / 1e9 << "B counted, the name says " << named / 1e9 << "B";
  }
  if (!IsTextGenerator(Architecture(c))) return;
  for (const char* engine : {"transformers", "vllm"}) {
    auto inf = RunMemfit({"inference", c.dir.string(), "--context", "131072", "--engine", engine,
                          "--format", "json"});
    ASSERT_EQ(inf.code, 0) << c.name << " (" << engine << "): " << inf.err;
    auto ij = nlohmann::json::parse(inf.out, nullptr, false);
    ASSERT_FALSE(ij.is_discarded()) << c.name;
    // Sane: a KV cache (or recurrent state) that is not empty, below 64 TiB at 131072 tokens.
    const uint64_t kv = ij["per_gpu"].value("kv_cache", uint64_t{0});
    EXPECT_GT(kv, 0u) << c.name << " (" << engine << ")";
    EXPECT_LT(kv, uint64_t{1} << 46) << c.name << " (" << engine << ")";
  }
  auto t = RunMemfit({"train", c.dir.string(), "--method", "lora", "--seq", "2048", "--format",
                      "json"});
  EXPECT_EQ(t.code, 0) << c.name << " (train lora): " << t.err;
}

std::string ConfigName(const ::testing::TestParamInfo<EvalConfig>& info) {
  std::string name = info.param.dir.parent_path().filename().string() + "_" + info.param.name;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Eval, EveryConfig, ::testing::ValuesIn(ParamConfigs()), ConfigName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(EveryConfig);

TEST_F(AnyConfig, TheSweepCoversTheRecentFamilies) {
  size_t generators = 0;
  for (const auto& c : configs_) generators += IsTextGenerator(Architecture(c));
  EXPECT_GT(configs_.size(), 150u);
  EXPECT_GT(generators, 120u);
}

// KV bytes per token by hand, one model of each attention kind (bf16 cache, vLLM's latent MLA).
TEST_F(AnyConfig, KvBytesPerTokenOfEachAttentionKind) {
  struct Case {
    const char* dir;
    const char* engine;
    uint64_t per_token;
    const char* why;
  };
  const Case cases[] = {
      {"recent/meta-llama__Meta-Llama-3.1-8B", "transformers", 131072,
       "full GQA: 32 layers x 2 x 8 KV heads x 128 x 2 B"},
      {"recent/stepfun-ai__Step-3.7-Flash", "transformers", 184320,
       "SWA pattern: 45 layers x 2 x 8 x 128 x 2 B = 4,096 each (sliding ones capped later)"},
      {"recent/deepseek-ai__DeepSeek-V3", "vllm", 70272, "MLA: 61 x (512 + 64) x 2 B"},
      {"recent/deepseek-ai__DeepSeek-V3.2", "vllm", 70272,
       "DSA: the MLA latent per token (indexer keys are counted per layer, not here)"},
      {"recent/deepseek-ai__DeepSeek-V4-Flash", "vllm", 44032,
       "compressed sparse attention: 43 layers x one shared K = V entry of 512 x 2 B (window and "
       "compressed entries and indexer keys are counted per layer, not here)"},
      {"recent/nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "vllm", 6144,
       "Mamba2 hybrid: 6 attention layers x 2 x 2 x 128 x 2 B"},
      {"recent/Qwen__Qwen3-Next-80B-A3B-Thinking", "vllm", 24576,
       "gated delta-net hybrid: 12 full layers x 2 x 2 x 256 x 2 B"},
      {"recent/LiquidAI__LFM2-1.2B", "vllm", 12288,
       "short-conv hybrid: 6 attention layers x 2 x 8 x 64 x 2 B"},
  };
  auto eval = testing::EvalDir();
  for (const auto& k : cases) {
    fs::path dir = fs::path(*eval) / k.dir;
    if (!fs::exists(dir)) {
      ADD_FAILURE() << k.dir << " is missing from the eval folder";
      continue;
    }
    auto r = RunMemfit({"inference", dir.string(), "--context", "4096", "--engine", k.engine,
                        "--format", "json"});
    ASSERT_EQ(r.code, 0) << k.dir << ": " << r.err;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j.value("kv_bytes_per_token", uint64_t{0}), k.per_token) << k.dir << ": " << k.why;
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
