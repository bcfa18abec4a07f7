// How the Hub client schedules its reads: shard headers fetched with the index (guessed from the
// file list, checked against the index afterwards), and first ranges sized to the headers seen.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "base/error_test_util.h"
#include "hub/net/file_choice.h"
#include "hub/net/weight_headers.h"
#include "hub_fixtures.h"
#include "memfit/hub.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)
using testing::FakeHub;
using testing::FakeRepo;
using testing::TestSettings;

Result<HubResolution> Resolve(const HubSettings& s, HubStats& stats, const std::string& id) {
  auto ref = ParseHubRef(id, s.endpoint);
  if (!ref) return ref.error();
  return ResolveHubModel(*ref, {}, s, stats);
}

std::vector<std::string> Paths(const HubResolution& r) {
  std::vector<std::string> out;
  for (const auto& [path, header] : r.inputs.safetensors) out.push_back(path);
  return out;
}

size_t Count(const std::vector<std::string>& log, const std::string& part) {
  return std::count_if(log.begin(), log.end(),
                       [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

TEST(HubPipelineTest, ShardHeadersAreReadWhileTheIndexArrives) {
  FakeHub hub;
  hub.AddRepo(testing::TinyLlamaRepo());
  // The index is answered only once both shard ranges have reached the CDN (or after 20 s, and
  // then the check below fails): no timing involved for a client that reads them concurrently.
  hub.slow_target = "model.safetensors.index.json";
  hub.slow_ms = 20'000;
  hub.slow_until_cdn_requests = 2;
  HubStats stats;
  auto r = Resolve(TestSettings(hub), stats, "org/tiny-llama");
  ASSERT_TRUE(r) << r.error().message;
  // Both shards went through the Hub's redirect and the CDN before the index was answered.
  auto before = hub.paths();
  before.resize(hub.requests_before_slow_answer);
  EXPECT_EQ(Count(before, "cdn /blob/"), 2u) << fmt::format("{}", fmt::join(hub.paths(), "\n"));
  EXPECT_EQ(Paths(*r), (std::vector<std::string>{"model-00001-of-00002.safetensors",
                                                 "model-00002-of-00002.safetensors"}));
  EXPECT_EQ(stats.headers_fetched.load(), 2u);
}

TEST(HubPipelineTest, TheIndexDecidesWhichShardsAreRead) {
  FakeHub hub;
  FakeRepo repo = testing::TinyLlamaRepo("org/renamed");
  // The index names shards that do not follow the model-NNNNN-of-NNNNN pattern...
  repo.files["weights-a.safetensors"] = repo.files["model-00001-of-00002.safetensors"];
  repo.files["weights-b.safetensors"] = repo.files["model-00002-of-00002.safetensors"];
  std::string index = repo.files["model.safetensors.index.json"];
  for (auto [from, to] : {std::pair{"model-00001-of-00002", "weights-a"},
                          std::pair{"model-00002-of-00002", "weights-b"}}) {
    for (size_t at; (at = index.find(from)) != std::string::npos;)
      index.replace(at, std::strlen(from), to);
  }
  repo.files["model.safetensors.index.json"] = index;
  // ...while a stale set that does (one of them not even a safetensors file) is guessed, read and
  // dropped, its error unreported.
  repo.files["model-00002-of-00002.safetensors"] = "not a safetensors file";
  hub.AddRepo(repo);
  HubStats stats;
  auto r = Resolve(TestSettings(hub), stats, "org/renamed");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(Paths(*r),
            (std::vector<std::string>{"weights-a.safetensors", "weights-b.safetensors"}));
  // The guessed good one, then the two listed: weights-a has the bytes (so the etag) of the first,
  // whose header the cache now holds.
  EXPECT_EQ(stats.headers_fetched.load(), 2u);
  EXPECT_EQ(stats.headers_cached.load(), 1u);

  // A guessed shard the index does list reports its own error.
  FakeRepo bad = testing::TinyLlamaRepo("org/bad-shard");
  bad.files["model-00002-of-00002.safetensors"] = std::string(16, '\xff');
  hub.AddRepo(bad);
  auto broken = Resolve(TestSettings(hub), stats, "org/bad-shard");
  testing::ExpectErrorContains(broken, "model-00002-of-00002.safetensors");
}

TEST(HubPipelineTest, LikelyShardsAreOneCompleteSet) {
  auto plan_for = [](std::vector<std::string> paths) {
    std::vector<hubnet::RepoFile> files;
    for (auto& p : paths) files.push_back({p, 1, testing::FakeSha1(p), false});
    files.push_back({"model.safetensors.index.json", 1, testing::FakeSha1("i"), false});
    auto plan = hubnet::PlanFiles("org/x", files, "", "", "");
    return plan ? plan->groups.at(0).likely_shards : std::vector<std::string>{"error"};
  };
  EXPECT_EQ(plan_for({"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                      "consolidated.safetensors", "sub/model-00001-of-00001.safetensors"}),
            (std::vector<std::string>{"model-00001-of-00002.safetensors",
                                      "model-00002-of-00002.safetensors"}));
  // DeepSeek-V3 writes six digits for the count.
  EXPECT_EQ(
      plan_for({"model-00001-of-000002.safetensors", "model-00002-of-000002.safetensors"}).size(),
      2u);
  EXPECT_TRUE(
      plan_for({"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors"}).empty());
  EXPECT_TRUE(plan_for({"model-00001-of-00001.safetensors", "model-00001-of-00002.safetensors",
                        "model-00002-of-00002.safetensors"})
                  .empty());  // two complete sets: no guess
  EXPECT_TRUE(plan_for({"model-00001-of-00002.safetensors", "model-00001-of-00002.safetensors.bak"})
                  .empty());
}

TEST(HubPipelineTest, FirstReadGrowsToTheLongestHeaderSeen) {
  EXPECT_EQ(hubnet::FirstReadBytes(128 << 10, 0), 128u << 10);
  EXPECT_EQ(hubnet::FirstReadBytes(128 << 10, 1000), 128u << 10);  // never below the setting
  EXPECT_EQ(hubnet::FirstReadBytes(128 << 10, 200'000),
            225'280u);  // 8 + 200000 + 25000 -> 55 pages
  EXPECT_EQ(hubnet::FirstReadBytes(128 << 10, 90'000'000), 8u << 20);  // capped

  // Four shards with ~150 KiB headers, read one after the other: the first costs two ranges
  // (128 KiB, then the rest), the others one.
  FakeHub hub;
  FakeRepo repo;
  repo.id = "org/long-headers";
  repo.commit = testing::FakeSha1("long-headers");
  for (int s = 1; s <= 4; ++s) {
    std::vector<testing::FakeTensor> tensors;
    for (int t = 0; t < 1500; ++t) {
      tensors.push_back(
          {fmt::format("model.layers.{}.mlp.experts.{}.a_rather_long_projection_name.weight", s, t),
           "F32",
           {1}});
    }
    repo.files[fmt::format("w{}.safetensors", s)] = testing::MakeSafetensors(tensors);
  }
  hub.AddRepo(repo);
  HubSettings settings = TestSettings(hub);
  settings.max_concurrency = 1;
  HubStats stats;
  auto r = Resolve(settings, stats, "org/long-headers");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->inputs.safetensors.size(), 4u);
  EXPECT_GT(r->inputs.safetensors[0].second.header_bytes, 128u << 10);
  EXPECT_EQ(hub.cdn_requests.load(), 5);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
