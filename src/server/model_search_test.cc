// The Hub search behind the page's model box (server/model_search.h): the URL asked, the answer
// read (hostile shapes included), and the route's refusals without a network.

#include "server/model_search.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace memfit::server {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(ModelSearch, UrlEncodesTheTextAndAsksForTheMostDownloaded) {
  EXPECT_EQ(HubSearchUrl("https://huggingface.co", "meta-llama/Llama 3&x=1"),
            "https://huggingface.co/api/models?search=meta-llama%2FLlama%203%26x%3D1&limit=20"
            "&sort=downloads&direction=-1");
}

TEST(ModelSearch, KeepsOnlyListingFields) {
  auto models = ParseHubModelList(R"([
    {"id": "Qwen/Qwen3-8B", "downloads": 1200, "likes": 30, "pipeline_tag": "text-generation",
     "private": false, "sha": "abc", "_id": "x"},
    {"id": "org/no-counts"}])");
  ASSERT_TRUE(models.has_value()) << models.error().message;
  EXPECT_EQ(*models, nlohmann::json::parse(R"([
    {"id": "Qwen/Qwen3-8B", "downloads": 1200, "likes": 30, "pipeline_tag": "text-generation"},
    {"id": "org/no-counts", "downloads": 0, "likes": 0, "pipeline_tag": ""}])"));
}

TEST(ModelSearch, HostileAnswers) {
  EXPECT_FALSE(ParseHubModelList(R"({"error": "nope"})").has_value());
  EXPECT_FALSE(ParseHubModelList("not json").has_value());
  EXPECT_FALSE(ParseHubModelList(std::string(100, '[')).has_value());  // the parser's depth bound
  // Entries without a string id, and counts that are not non-negative integers.
  auto models = ParseHubModelList(R"([1, "x", {"id": 7}, {"id": ""},
    {"id": "a/b", "downloads": -5, "likes": "many", "pipeline_tag": 3}])");
  ASSERT_TRUE(models.has_value());
  ASSERT_EQ(models->size(), 1u);
  EXPECT_EQ((*models)[0]["downloads"], 0);
  EXPECT_EQ((*models)[0]["likes"], 0);
  EXPECT_EQ((*models)[0]["pipeline_tag"], "");
}

TEST(ModelSearch, AtMostTheLimit) {
  nlohmann::json list = nlohmann::json::array();
  for (int i = 0; i < 50; ++i) list.push_back({{"id", "org/m" + std::to_string(i)}});
  auto models = ParseHubModelList(list.dump());
  ASSERT_TRUE(models.has_value());
  EXPECT_EQ(models->size(), static_cast<size_t>(kHubSearchLimit));
}

TEST(ModelSearch, RouteRefusesBadTextAndOfflineServers) {
  EXPECT_EQ(SearchHubModels({}).status, 400);
  EXPECT_EQ(SearchHubModels({{"search", std::string(200, 'a')}}).status, 400);
  EXPECT_EQ(SearchHubModels({{"search", "a\nb"}}).status, 400);
  const char* old = std::getenv("HF_HUB_OFFLINE");
  std::string saved = old ? old : "";
  setenv("HF_HUB_OFFLINE", "1", 1);
  ApiResponse offline = SearchHubModels({{"search", "llama"}});
  if (old) setenv("HF_HUB_OFFLINE", saved.c_str(), 1); else unsetenv("HF_HUB_OFFLINE");
  EXPECT_EQ(offline.status, 400);
  EXPECT_NE(offline.body.find("offline"), std::string::npos);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::server
