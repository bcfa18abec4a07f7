// The built-in catalog: every entry builds from its config with the registered builder, its
// parameter count matches the published one where we list it, and smaller_sibling points at a
// smaller model in the catalog. Entries of a family without a registered builder skip (they become
// real checks once that builder is merged).

#include <cctype>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "memfit/architecture.h"
#include "memfit/catalog.h"
#include "memfit/hf_config.h"
#include "memfit/estimate_load.h"
#include "model/catalog/catalog_files.h"
#include "model/catalog/entries.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// Published parameter counts (the class in architectures[0], tied weights once), as the Hub shows
// them for each repository's safetensors and as transformers counts them on the meta device.
const std::map<std::string_view, uint64_t>& PublishedParameters() {
  static const std::map<std::string_view, uint64_t> kCounts = {
      {"meta-llama/Llama-3.1-8B", 8030261248},
      {"meta-llama/Llama-3.1-70B", 70553706496},
      {"meta-llama/Llama-3.1-405B", 405853388800},
      {"meta-llama/Llama-2-7b-hf", 6738415616},
      {"meta-llama/Llama-2-13b-hf", 13015864320},
      {"meta-llama/Llama-2-70b-hf", 68976648192},
      {"meta-llama/Llama-3.2-1B", 1235814400},
      {"meta-llama/Llama-3.2-3B", 3212749824},
      {"mistralai/Mistral-7B-v0.1", 7241732096},
      {"mistralai/Mixtral-8x7B-v0.1", 46702792704},
      {"mistralai/Mixtral-8x22B-v0.1", 140630071296},
      {"Qwen/Qwen2.5-0.5B", 494032768},
      {"Qwen/Qwen2.5-7B", 7615616512},
      {"Qwen/Qwen3-0.6B", 596049920},
      {"Qwen/Qwen3-8B", 8190735360},
      {"Qwen/Qwen3-30B-A3B", 30532122624},
      {"openai-community/gpt2", 124439808},
      {"openai-community/gpt2-medium", 354823168},
      {"openai-community/gpt2-large", 774030080},
      {"openai-community/gpt2-xl", 1557611200},
      {"EleutherAI/gpt-j-6b", 6050882784},
      {"EleutherAI/pythia-1.4b", 1414647808},
      {"facebook/opt-1.3b", 1315758080},
      {"bigscience/bloom-560m", 559214592},
      {"tiiuae/falcon-7b", 6921720704},
      {"mosaicml/mpt-7b", 6649286656},
      {"google/gemma-2b", 2506172416},
      {"google/gemma-7b", 8537680896},
      {"google/gemma-2-9b", 9241705984},
      {"google/gemma-2-27b", 27227128320},
      {"google/gemma-3-1b-it", 999885952},
      {"google/gemma-3-4b-it", 4300079472},
      {"google/gemma-3-12b-it", 12187325040},
      {"google/gemma-3-27b-it", 27432406640},
      {"microsoft/Phi-3-mini-4k-instruct", 3821079552},
      {"microsoft/Phi-3-medium-4k-instruct", 13960238080},
      {"google-t5/t5-small", 60506624},
      {"google-t5/t5-base", 222903552},
      {"mistral-community/pixtral-12b", 12682739712},
      {"meta-llama/Llama-3.2-11B-Vision", 10670220835},
  };
  return kCounts;
}

bool HasBuilder(const HfConfig& config) {
  auto archs = config.architectures();
  return FindArchitectureBuilder(config.model_type(), archs.empty() ? "" : archs.front()) != nullptr;
}

std::string TestName(std::string_view id) {
  std::string name;
  for (char c : id) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

class CatalogEntryTest : public ::testing::TestWithParam<size_t> {};

TEST_P(CatalogEntryTest, BuildsFromItsConfig) {
  const CatalogEntry& e = Catalog()[GetParam()];
  auto config = HfConfig::Parse(e.config_json, std::string(e.id));
  ASSERT_TRUE(config) << e.id << ": " << config.error().message;
  EXPECT_FALSE(config->model_type().empty()) << e.id;
  if (!HasBuilder(*config)) {
    GTEST_SKIP() << e.id << ": no builder registered for model_type \"" << config->model_type()
                 << "\" in this build";
  }
  auto model = BuildFromConfig(*config);
  ASSERT_TRUE(model) << e.id << ": " << model.error().message;
  auto totals = ComputeTotals(*model);
  EXPECT_GT(totals.parameters, 0u) << e.id;
  // The totals written in the entry's file (what `memfit models` lists) are the build's.
  EXPECT_EQ(e.parameters, totals.parameters) << e.id;
  EXPECT_EQ(e.stored_bytes, totals.stored_bytes) << e.id;
  // Catalog configs name their dtype: it is never guessed. (A family's own facts, such as
  // Qwen3.5 keeping A_log in float32, are assumption lines of the builder, not guesses.)
  for (const auto& a : model->assumptions) {
    EXPECT_EQ(a.find("torch_dtype"), std::string::npos) << e.id << ": " << a;
  }
  auto published = PublishedParameters().find(e.id);
  if (published != PublishedParameters().end()) {
    EXPECT_EQ(totals.parameters, published->second) << e.id;
  }
}

INSTANTIATE_TEST_SUITE_P(Catalog, CatalogEntryTest, ::testing::Range<size_t>(0, Catalog().size()),
                         [](const auto& info) { return TestName(Catalog()[info.param].id); });

// The catalog is data: every embedded file is an entry (no file is dropped as malformed), and no
// id is there twice.
TEST(Catalog, EveryConfigFileIsOneEntry) {
  EXPECT_TRUE(catalog::LoadErrors().empty()) << catalog::LoadErrors().front();
  EXPECT_EQ(Catalog().size(), catalog::CatalogFiles().size());
  std::set<std::string_view> ids;
  for (const auto& e : Catalog()) EXPECT_TRUE(ids.insert(e.id).second) << e.id << " twice";
}

// The 2025-2026 entries hold the published config.json's hyperparameters without tokenizer ids,
// training-only settings and library metadata: each builds exactly what the published config
// builds (every tensor's name, shape and dtype: the same parameters and stored bytes). The
// published configs are in ../shared/eval; skipped where it is absent.
TEST(Catalog, RecentEntriesBuildWhatThePublishedConfigBuilds) {
  static const std::pair<std::string_view, std::string_view> kPublished[] = {
      {"Qwen/Qwen3-235B-A22B", "recent/Qwen__Qwen3-235B-A22B"},
      {"Qwen/Qwen3-Coder-480B-A35B-Instruct", "recent/Qwen__Qwen3-Coder-480B-A35B-Instruct"},
      {"Qwen/Qwen3-Next-80B-A3B-Thinking", "recent/Qwen__Qwen3-Next-80B-A3B-Thinking"},
      {"Qwen/Qwen3-VL-2B-Instruct", "recent/Qwen__Qwen3-VL-2B-Instruct"},
      {"Qwen/Qwen3-VL-4B-Instruct", "recent/Qwen__Qwen3-VL-4B-Instruct"},
      {"Qwen/Qwen3-VL-32B-Instruct", "recent/Qwen__Qwen3-VL-32B-Instruct"},
      {"Qwen/Qwen3-VL-30B-A3B-Instruct", "recent/Qwen__Qwen3-VL-30B-A3B-Instruct"},
      {"Qwen/Qwen3-VL-235B-A22B-Instruct", "recent/Qwen__Qwen3-VL-235B-A22B-Instruct"},
      {"Qwen/Qwen3.5-27B", "recent/Qwen__Qwen3.5-27B"},
      {"Qwen/Qwen3.5-35B-A3B", "recent/Qwen__Qwen3.5-35B-A3B"},
      {"Qwen/Qwen3.5-397B-A17B", "recent/Qwen__Qwen3.5-397B-A17B"},
      {"deepseek-ai/DeepSeek-V3", "recent/deepseek-ai__DeepSeek-V3"},
      {"deepseek-ai/DeepSeek-R1", "recent/deepseek-ai__DeepSeek-R1"},
      {"deepseek-ai/DeepSeek-V3.1", "recent/deepseek-ai__DeepSeek-V3.1"},
      {"deepseek-ai/DeepSeek-V3.2", "recent/deepseek-ai__DeepSeek-V3.2"},
      {"moonshotai/Kimi-K2-Instruct", "recent/moonshotai__Kimi-K2-Instruct"},
      {"moonshotai/Kimi-K2.5", "recent/moonshotai__Kimi-K2.5"},
      {"zai-org/GLM-5", "recent/zai-org__GLM-5"},
      {"openai/gpt-oss-20b", "recent/openai__gpt-oss-20b"},
      {"openai/gpt-oss-120b", "recent/openai__gpt-oss-120b"},
      {"meta-llama/Llama-4-Scout-17B-16E-Instruct", "recent/meta-llama__Llama-4-Scout-17B-16E-Instruct"},
      {"mistralai/Devstral-Small-2507", "recent/mistralai__Devstral-Small-2507"},
      {"HuggingFaceTB/SmolLM3-3B", "recent/HuggingFaceTB__SmolLM3-3B"},
      {"LiquidAI/LFM2-1.2B", "recent/LiquidAI__LFM2-1.2B"},
      {"MiniMaxAI/MiniMax-M2.5", "recent/MiniMaxAI__MiniMax-M2.5"},
      {"nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "recent/nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"},
      {"nvidia/Nemotron-H-56B-Base-8K", "recent/nvidia__Nemotron-H-56B-Base-8K"},
      {"google/gemma-4-26B-A4B", "recent/google__gemma-4-26B-A4B"},
      {"google/gemma-4-31B-it", "models/google__gemma-4-31B-it"},
      {"microsoft/phi-4", "models/microsoft__phi-4"},
      {"LGAI-EXAONE/EXAONE-4.0-1.2B", "recent/LGAI-EXAONE__EXAONE-4.0-1.2B-fp16-derived"},
      {"Qwen/Qwen3-235B-A22B-FP8", "recent/Qwen__Qwen3-235B-A22B-FP8"},
      {"zai-org/GLM-5-FP8", "recent/zai-org__GLM-5-FP8"},
      {"nvidia/Llama-3.1-70B-Instruct-FP8", "recent/nvidia__Llama-3.1-70B-Instruct-FP8"},
  };
  auto dir = testing::EvalDir();
  if (!dir) GTEST_SKIP() << "../shared/eval is absent: the published configs are not here to compare with";
  for (const auto& [id, sub] : kPublished) {
    SCOPED_TRACE(std::string(id));
    const CatalogEntry* entry = FindCatalogEntry(id);
    ASSERT_NE(entry, nullptr);
    auto text = testing::ReadFile(*dir + "/" + std::string(sub) + "/config.json");
    ASSERT_TRUE(text) << sub;
    auto published = HfConfig::Parse(*text, std::string(sub));
    auto ours = HfConfig::Parse(entry->config_json, std::string(id));
    ASSERT_TRUE(published && ours);
    auto a = BuildFromConfig(*published);
    auto b = BuildFromConfig(*ours);
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->tensors.size(), b->tensors.size());
    uint64_t bytes_a = 0, bytes_b = 0;
    // Where the published config names no dtype (gpt-oss, MiniMax-M2.5), the entry writes the
    // checkpoint's own (bfloat16), so only names and shapes must agree.
    const bool dtype_named = a->config_dtype.has_value();
    for (size_t i = 0; i < a->tensors.size(); ++i) {
      EXPECT_EQ(a->tensors[i].name, b->tensors[i].name);
      EXPECT_EQ(a->tensors[i].shape, b->tensors[i].shape) << a->tensors[i].name;
      if (dtype_named) {
        EXPECT_EQ(a->tensors[i].dtype, b->tensors[i].dtype) << a->tensors[i].name;
      }
      bytes_a += a->tensors[i].bytes;
      bytes_b += b->tensors[i].bytes;
    }
    if (dtype_named) {
      EXPECT_EQ(bytes_a, bytes_b);
    }
    EXPECT_EQ(a->hp.max_position_embeddings, b->hp.max_position_embeddings);
  }
}

TEST(Catalog, HasTheRequiredBreadth) {
  std::set<std::string_view> ids, families;
  for (const auto& e : Catalog()) {
    EXPECT_TRUE(ids.insert(e.id).second) << "duplicate catalog id " << e.id;
    families.insert(e.family);
  }
  EXPECT_GE(Catalog().size(), 42u);
  for (std::string_view family : {"bert", "distilbert", "roberta", "gpt2", "t5", "llama", "mistral",
                                  "mixtral", "qwen2", "qwen3", "gemma", "gemma2", "phi3"}) {
    EXPECT_TRUE(families.count(family)) << family;
  }
  ASSERT_NE(FindCatalogEntry("bert-base-cased"), nullptr);
  EXPECT_EQ(FindCatalogEntry("bert-base-cased")->id, "google-bert/bert-base-cased");
}

TEST(Catalog, SmallerSiblingsAreSmallerCatalogModels) {
  for (const auto& e : Catalog()) {
    if (e.smaller_sibling.empty()) continue;
    const CatalogEntry* sibling = FindCatalogEntry(e.smaller_sibling);
    ASSERT_NE(sibling, nullptr) << e.id << ": sibling " << e.smaller_sibling << " not in catalog";
    auto a = HfConfig::Parse(e.config_json, std::string(e.id));
    auto b = HfConfig::Parse(sibling->config_json, std::string(sibling->id));
    ASSERT_TRUE(a && b);
    if (!HasBuilder(*a) || !HasBuilder(*b)) continue;  // checked once both builders are merged
    auto big = BuildFromConfig(*a);
    auto small = BuildFromConfig(*b);
    ASSERT_TRUE(big && small) << e.id;
    EXPECT_LT(ComputeTotals(*small).parameters, ComputeTotals(*big).parameters) << e.id;
  }
}

TEST(Catalog, BertBaseCasedMatchesAccelerate) {
  const CatalogEntry* e = FindCatalogEntry("google-bert/bert-base-cased");
  ASSERT_NE(e, nullptr);
  auto config = HfConfig::Parse(e->config_json, std::string(e->id));
  ASSERT_TRUE(config);
  if (!HasBuilder(*config)) GTEST_SKIP() << "no bert builder registered in this build";
  auto model = BuildFromConfig(*config, {.buffers = BufferConvention::kTransformers442});
  ASSERT_TRUE(model) << model.error().message;
  // BertForMaskedLM has 108,340,804 parameters; accelerate builds BertModel: 108,310,272
  // parameters x 4 B + 8,192 B of int64 position/token-type buffers = 433,249,280 B
  // (../shared/docs/reference/accelerate-quirks.md).
  EXPECT_EQ(ComputeTotals(*model).parameters, 108340804u);
  auto estimate = EstimateAccelerate(*model);
  ASSERT_TRUE(estimate);
  EXPECT_EQ(estimate->rows[0].total_bytes, 433249280.0);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
