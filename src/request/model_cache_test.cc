// The process's model cache (memfit/resolve.h): what it keeps, for how long, and that a kept
// model answers exactly what a fresh one does.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include "hub_cli_support.h"
#include "memfit/catalog.h"
#include "memfit/estimate_load.h"
#include "memfit/load_summary.h"
#include "memfit/render.h"
#include "memfit/resolve.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)
using testing::FakeHub;
using testing::ScopedEnv;

// Turns the cache on for one test, and off (empty) after it.
class ModelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { On(10'000); }
  void TearDown() override {
    ConfigureModelCache({.max_entries = 0});
    ClearModelCache();
  }
  static void On(uint32_t ttl_ms) {
    ClearModelCache();
    ConfigureModelCache({.max_entries = 16, .max_tensors = 2'000'000, .hub_ttl_ms = ttl_ms});
  }
};

TEST_F(ModelCacheTest, ACatalogModelIsBuiltOnceAndAnswersAsAFreshOne) {
  ScopedEnv env;
  env.Set("HF_HUB_OFFLINE", "1");
  const ModelQuery query{.spec = "google-bert/bert-base-uncased"};
  auto first = ResolveAndDescribeShared(query);
  ASSERT_TRUE(first) << first.error().message;
  auto second = ResolveAndDescribeShared(query);
  ASSERT_TRUE(second);
  EXPECT_EQ(first->get(), second->get());
  // Another builder convention is another model.
  auto accelerate = ResolveAndDescribeShared(
      query, {.build = {.buffers = BufferConvention::kTransformers442}, .prefer_config = true});
  ASSERT_TRUE(accelerate);
  EXPECT_NE(accelerate->get(), first->get());
  // Another revision or token is another key.
  auto other_token = ResolveAndDescribeShared({.spec = query.spec, .token = "hf_x"});
  ASSERT_TRUE(other_token);
  EXPECT_NE(other_token->get(), first->get());

  // The kept model, its kept blocks and a model built now give the same JSON, byte for byte.
  ConfigureModelCache({.max_entries = 0});
  auto fresh = ResolveAndDescribe(query);
  ASSERT_TRUE(fresh);
  const LoadOptions options;
  const Model& kept = (*first)->model();
  EXPECT_EQ(RenderLoadEstimate(kept, EstimateLoad(kept, options, (*first)->ResidentBlocks()),
                               OutputFormat::kJson),
            RenderLoadEstimate(*fresh, EstimateLoad(*fresh, options), OutputFormat::kJson));
}

// Every catalog model, kept: the kept load summary (merged runs) gives each dtype row's total and
// largest block exactly as the per-tensor sums of LoadedTensorBytes over the resident tensors.
TEST_F(ModelCacheTest, KeptLoadSummariesEqualPerTensorSums) {
  ScopedEnv env;
  env.Set("HF_HUB_OFFLINE", "1");
  const LoadOptions options{.dtypes = {LoadDtype::kAsStored, LoadDtype::kFloat32,
                                       LoadDtype::kFloat16, LoadDtype::kInt8, LoadDtype::kInt4}};
  size_t merged_away = 0;
  for (const CatalogEntry& entry : Catalog()) {
    auto kept = ResolveAndDescribeShared({.spec = std::string(entry.id)});
    ASSERT_TRUE(kept) << entry.id << ": " << kept.error().message;
    const Model& m = (*kept)->model();
    const BlockAssignment& blocks = (*kept)->ResidentBlocks();
    const LoadSummary& summary = (*kept)->ResidentLoadSummary();
    merged_away += m.tensors.size() - summary.entries.size();
    const LoadEstimate estimate = EstimateLoad(summary, options);
    ASSERT_EQ(estimate.rows.size(), options.dtypes.size());
    for (size_t r = 0; r < options.dtypes.size(); ++r) {
      const TensorFilter at{.size_of = [&](const Tensor& t) {
        return LoadedTensorBytes(t, options.dtypes[r]);
      }};
      uint64_t total = 0;
      std::vector<uint64_t> per_block(blocks.names.size());
      for (size_t i = 0; i < m.tensors.size(); ++i) {
        const uint64_t size = FilteredSize(m.tensors[i], at);
        total += size;
        if (blocks.tensor_block[i] >= 0) per_block[blocks.tensor_block[i]] += size;
      }
      const uint64_t largest =
          per_block.empty() ? 0 : *std::max_element(per_block.begin(), per_block.end());
      EXPECT_EQ(estimate.rows[r].total_bytes, total) << entry.id << " " << r;
      EXPECT_EQ(estimate.rows[r].largest_block_bytes, largest) << entry.id << " " << r;
    }
  }
  EXPECT_GT(merged_away, 100'000u);  // the per-expert checkpoints collapse
}

TEST_F(ModelCacheTest, OffKeepsNothing) {
  ConfigureModelCache({.max_entries = 0});
  ScopedEnv env;
  env.Set("HF_HUB_OFFLINE", "1");
  auto a = ResolveAndDescribeShared({.spec = "google-bert/bert-base-uncased"});
  auto b = ResolveAndDescribeShared({.spec = "google-bert/bert-base-uncased"});
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->get(), b->get());
}

TEST_F(ModelCacheTest, TheEnvironmentIsPartOfTheKey) {
  ScopedEnv env;
  env.Set("HF_HUB_OFFLINE", "1");
  auto a = ResolveModelShared({.spec = "google-bert/bert-base-uncased"});
  env.Set("HF_ENDPOINT", "http://127.0.0.1:7");  // the tests default to :9
  auto b = ResolveModelShared({.spec = "google-bert/bert-base-uncased"});
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->get(), b->get());
}

TEST_F(ModelCacheTest, ALocalModelIsBuiltAgainWhenItsFilesChange) {
  const auto dir = std::filesystem::path(testing::TempDir()) / "bert";
  std::filesystem::create_directories(dir);
  const auto* entry = FindCatalogEntry("google-bert/bert-base-uncased");
  ASSERT_NE(entry, nullptr);
  std::ofstream(dir / "config.json") << entry->config_json;
  const ModelQuery query{.spec = dir.string()};
  auto first = ResolveAndDescribeShared(query);
  ASSERT_TRUE(first) << first.error().message;
  auto again = ResolveAndDescribeShared(query);
  ASSERT_TRUE(again);
  EXPECT_EQ(first->get(), again->get());
  // Another config (a different size): a new model with other numbers.
  auto json = nlohmann::json::parse(entry->config_json);
  ASSERT_EQ(json["num_hidden_layers"], 12);
  json["num_hidden_layers"] = 2;  // the file is shorter: its size changes with its mtime
  std::ofstream(dir / "config.json") << json.dump();
  auto changed = ResolveAndDescribeShared(query);
  ASSERT_TRUE(changed) << changed.error().message;
  EXPECT_NE(changed->get(), first->get());
  EXPECT_LT((*changed)->model().tensors.size(), (*first)->model().tensors.size());
  // A file added to the directory.
  std::ofstream(dir / "README.md") << "hello";
  auto added = ResolveAndDescribeShared(query);
  ASSERT_TRUE(added);
  EXPECT_NE(added->get(), changed->get());
}

TEST_F(ModelCacheTest, AHubAnswerLastsItsTtlAndErrorsAreNotKept) {
  FakeHub hub;
  hub.AddRepo(testing::TinyLlamaRepo("org/open"));
  ScopedEnv env;
  testing::PointAt(env, hub.endpoint());
  auto first = ResolveModelShared({.spec = "org/open"});
  ASSERT_TRUE(first) << first.error().message;
  const int asked = hub.hub_requests.load();
  EXPECT_GT(asked, 0);
  auto kept = ResolveModelShared({.spec = "org/open"});
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->get(), first->get());
  EXPECT_EQ(hub.hub_requests.load(), asked);  // the Hub was not asked again

  On(1);  // answers through the Hub client last 1 ms
  auto short_lived = ResolveModelShared({.spec = "org/open"});
  ASSERT_TRUE(short_lived);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto renewed = ResolveModelShared({.spec = "org/open"});
  ASSERT_TRUE(renewed);
  EXPECT_NE(renewed->get(), short_lived->get());

  On(10'000);
  auto missing = ResolveModelShared({.spec = "org/does-not-exist"});
  ASSERT_FALSE(missing);
  const int after_miss = hub.hub_requests.load();
  auto missing_again = ResolveModelShared({.spec = "org/does-not-exist"});
  ASSERT_FALSE(missing_again);
  EXPECT_EQ(missing_again.error().kind, ErrorKind::kNotFound);
  EXPECT_GT(hub.hub_requests.load(), after_miss);  // asked again: errors are not kept
}

TEST_F(ModelCacheTest, ConcurrentRequestsForOneModelShareOneBuild) {
  ScopedEnv env;
  env.Set("HF_HUB_OFFLINE", "1");
  std::vector<std::thread> threads;
  std::vector<const DescribedModel*> seen(8);
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] {
      auto model = ResolveAndDescribeShared({.spec = "meta-llama/Llama-3.1-8B"});
      seen[i] = model ? model->get() : nullptr;
      if (model) (void)(*model)->ResidentBlocks();
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_NE(seen[0], nullptr);
  for (const DescribedModel* p : seen) EXPECT_EQ(p, seen[0]);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
