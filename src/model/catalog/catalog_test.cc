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
#include "memfit/estimate_load.h"
#include "model/catalog/catalog_files.h"
#include "model/catalog/entries.h"

namespace memfit {
namespace {

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
      {"microsoft/Phi-3-mini-4k-instruct", 3821079552},
      {"microsoft/Phi-3-medium-4k-instruct", 13960238080},
      {"google-t5/t5-small", 60506624},
      {"google-t5/t5-base", 222903552},
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
  // Catalog configs name their dtype: nothing is guessed.
  EXPECT_TRUE(model->assumptions.empty()) << e.id << ": " << model->assumptions.front();
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

}  // namespace
}  // namespace memfit
