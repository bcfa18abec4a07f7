// Ground truth over ../shared/eval/recent for the issue-15 families (smollm3, exaone4, nemotron_h,
// lfm2, deepseek_v32, glm_moe_dsa, kimi_k2, gemma4, llama4): every config of those types builds, a
// weight index's total_size equals the config-only stored bytes exactly, and the parameter counts
// agree with the figure each model's name or card gives (rounded there, so within the stated
// tolerance). Exact hand-derived counts of the same configs are in the builders' tests. Skips when
// the eval folder is absent; a config the JSON parser rejects (Python's `Infinity`) is reported and
// skipped.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "formats/hf_config_json.h"
#include "memfit/architecture.h"
#include "memfit/safetensors.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

namespace fs = std::filesystem;

const std::set<std::string>& Families() {
  static const std::set<std::string> kTypes = {"smollm3", "exaone4",      "nemotron_h",
                                               "lfm2",    "deepseek_v32", "glm_moe_dsa",
                                               "kimi_k2", "gemma4",       "llama4"};
  return kTypes;
}

struct Loaded {
  std::string name;
  std::optional<HfConfig> config;  // nullopt: the parser rejected it (reason in `error`)
  std::string error;
};

std::vector<Loaded> RecentConfigs(const std::string& eval) {
  std::vector<Loaded> out;
  const fs::path root = fs::path(eval) / "recent";
  if (!fs::exists(root)) return out;
  for (const auto& entry : fs::directory_iterator(root)) {
    const fs::path file = entry.path() / "config.json";
    auto text = testing::ReadFile(file.string());
    if (!text) continue;
    Loaded l;
    l.name = entry.path().filename().string();
    auto config = HfConfig::Parse(*text, file.string());
    if (config) {
      if (!Families().count(config->model_type())) continue;
      l.config = *config;
    } else {
      const bool ours = std::any_of(Families().begin(), Families().end(), [&](const auto& type) {
        return text->find("\"" + type + "\"") != std::string::npos;
      });
      if (!ours) continue;
      l.error = config.error().message;
    }
    out.push_back(std::move(l));
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return out;
}

TEST(RecentFamilies, EveryConfigBuildsAndIndexesMatch) {
  auto eval = testing::EvalDir();
  if (!eval) GTEST_SKIP() << "../shared/eval is absent: ground-truth checks skipped";
  int built = 0, exact = 0;
  for (const auto& m : RecentConfigs(*eval)) {
    if (!m.config) {
      std::cout << "[recent] " << m.name << ": config not parsed (" << m.error << ")\n";
      continue;
    }
    auto model = BuildFromConfig(*m.config);
    const auto& raw = m.config->raw();
    const bool modelopt = raw.contains("quantization_config") &&
                          raw["quantization_config"].value("quant_method", "") == "modelopt";
    if (!model && modelopt) {  // NVIDIA ModelOpt NVFP4: not built from the config yet
      std::cout << "[recent] " << m.name << ": " << model.error().message << "\n";
      continue;
    }
    ASSERT_TRUE(model) << m.name << ": " << model.error().message;
    ++built;
    auto text = testing::ReadFile(
        (fs::path(*eval) / "recent" / m.name / "model.safetensors.index.json").string());
    if (!text) continue;
    auto index = ParseWeightIndex(*text, m.name);
    ASSERT_TRUE(index) << m.name << ": " << index.error().message;
    if (!index->total_size) continue;
    EXPECT_EQ(ComputeTotals(*model).stored_bytes, *index->total_size) << m.name;
    ++exact;
  }
  EXPECT_GT(built, 0);
  std::cout << "[recent] " << built << " configs built, " << exact
            << " matched their index total_size exactly\n";
}

struct Card {
  const char* model;
  double parameters;  // the figure in the name or on the card
  double tolerance;   // relative
  bool stored;        // the figure counts stored tensors (the Hub's safetensors total, MTP too)
  const char* source;
};

TEST(RecentFamilies, ParameterCountsMatchNamesAndCards) {
  auto eval = testing::EvalDir();
  if (!eval) GTEST_SKIP() << "../shared/eval is absent: ground-truth checks skipped";
  const Card kCards[] = {
      {"HuggingFaceTB__SmolLM3-3B", 3075098624.0, 0.0, false, "index metadata total_parameters"},
      {"LGAI-EXAONE__EXAONE-4.0-1.2B-fp16-derived", 1.28e9, 0.005, false, "card: 1.28B"},
      {"LiquidAI__LFM2-1.2B", 1.17e9, 0.005, false, "card: 1.17B"},
      {"nvidia__Nemotron-H-56B-Base-8K", 56e9, 0.01, false, "name: 56B"},
      {"nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 31.6e9, 0.005, false, "card: 31.6B total"},
      {"nvidia__NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", 550e9, 0.005, false, "name: 550B"},
      {"deepseek-ai__DeepSeek-V3.2", 685e9, 0.005, true, "Hub: 685B (with the MTP layer)"},
      {"zai-org__GLM-5", 744e9, 0.005, false, "card: 744B"},
      {"zai-org__GLM-5-FP8", 744e9, 0.005, false, "card: 744B"},
      {"moonshotai__Kimi-K2-Instruct", 1e12, 0.03, false, "card: 1T total"},
      // The eval copy has no vision_config: transformers' default vision model (0.42B smaller
      // than the real one; with it the count is 108,641,793,536, see llama4_test.cc).
      {"meta-llama__Llama-4-Scout-17B-16E-Instruct", 109e9, 0.01, false, "card: 109B total"},
  };
  int checked = 0;
  for (const auto& card : kCards) {
    const fs::path file = fs::path(*eval) / "recent" / card.model / "config.json";
    auto text = testing::ReadFile(file.string());
    if (!text) continue;
    auto config = HfConfig::Parse(*text, file.string());
    if (!config) {
      std::cout << "[recent] " << card.model << ": config not parsed (" << config.error().message
                << ")\n";
      continue;
    }
    auto model = BuildFromConfig(*config);
    ASSERT_TRUE(model) << card.model << ": " << model.error().message;
    double count = 0;
    if (card.stored) {
      for (const auto& t : model->tensors) {
        if (t.stored && t.kind != TensorKind::kNonPersistentBuffer) count += t.numel;
      }
    } else {
      count = static_cast<double>(ComputeTotals(*model).parameters);
    }
    EXPECT_LE(std::fabs(count / card.parameters - 1.0), card.tolerance)
        << card.model << ": " << count << " vs " << card.source;
    ++checked;
  }
  std::cout << "[recent] " << checked << " parameter counts checked against names and cards\n";
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
