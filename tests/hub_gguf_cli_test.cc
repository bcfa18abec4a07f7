// GGUF models on the (fake) Hub through the CLI: `inference` and `fit` route them to the llama.cpp
// estimator (chosen with --gguf-file, by a file URL, or as a repository's only model), the fit
// command names the Hub file the way llama.cpp downloads it, and a second run needs no network.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "gguf_models.h"
#include "hub_cli_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)
using testing::FakeHub;
using testing::FakeRepo;
using testing::PointAt;
using testing::RunCli;
using testing::ScopedEnv;

void AddGguf(FakeRepo& repo, const std::string& path, const testing::GgufWriter& w) {
  repo.files[path] = w.Header();
  repo.logical_sizes[path] = repo.files[path].size() + w.DataBytes();
}

class HubGgufCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeRepo quants;
    quants.id = "org/quants-GGUF";
    quants.commit = testing::FakeSha1("quants");
    testing::GgufShape shape;  // 2 layers, 256 hidden
    AddGguf(quants, "m-Q8_0.gguf", testing::MakeGgufWriter(shape));
    shape.type_of = [](const std::string&, int) { return testing::kQ4_0; };
    AddGguf(quants, "m-Q4_0.gguf", testing::MakeGgufWriter(shape));
    hub_.AddRepo(quants);
    FakeRepo one;
    one.id = "org/one-GGUF";
    one.commit = testing::FakeSha1("one");
    AddGguf(one, "only.gguf", testing::MakeGgufWriter(testing::GgufShape{}));
    hub_.AddRepo(one);
    PointAt(env_, hub_.endpoint());
  }
  FakeHub hub_;
  ScopedEnv env_;
};

TEST_F(HubGgufCliTest, InferenceRoutesHubGgufModelsToLlamaCpp) {
  auto chosen = RunCli({"inference", "org/quants-GGUF", "--gguf-file", "Q4_0", "--context", "1024",
                        "--format", "json"});
  ASSERT_EQ(chosen.code, 0) << chosen.err;
  auto json = nlohmann::json::parse(chosen.out);
  EXPECT_TRUE(json.contains("kv_k_bytes")) << chosen.out;  // the llama.cpp estimate
  EXPECT_EQ(json["model"], "org/quants-GGUF");
  // The only model of a repository routes without --gguf-file; a file URL routes too.
  auto only = RunCli({"inference", "org/one-GGUF", "--format", "json"});
  ASSERT_EQ(only.code, 0) << only.err;
  EXPECT_TRUE(nlohmann::json::parse(only.out).contains("kv_k_bytes")) << only.out;
  auto url = RunCli({"inference", hub_.endpoint() + "/org/quants-GGUF/resolve/main/m-Q8_0.gguf",
                     "--format", "json"});
  ASSERT_EQ(url.code, 0) << url.err;
  EXPECT_TRUE(nlohmann::json::parse(url.out).contains("kv_k_bytes")) << url.out;
  // Several models and none chosen: a one-line error listing them.
  auto ambiguous = RunCli({"inference", "org/quants-GGUF"});
  EXPECT_EQ(ambiguous.code, 1);
  EXPECT_NE(ambiguous.err.find("2 GGUF models; choose one with --gguf-file"), std::string::npos)
      << ambiguous.err;
  EXPECT_NE(ambiguous.err.find("m-Q4_0.gguf, m-Q8_0.gguf"), std::string::npos) << ambiguous.err;
  EXPECT_EQ(std::count(ambiguous.err.begin(), ambiguous.err.end(), '\n'), 1) << ambiguous.err;
}

TEST_F(HubGgufCliTest, FitNamesTheHubFileForLlamaServer) {
  auto fit = RunCli({"fit", "org/quants-GGUF", "--gguf-file", "m-Q8_0.gguf", "--gpu", "24GiB"});
  ASSERT_EQ(fit.code, 0) << fit.err;
  EXPECT_NE(fit.out.find("llama-server --hf-repo org/quants-GGUF --hf-file m-Q8_0.gguf -c "),
            std::string::npos)
      << fit.out;
  auto gguf_fit = RunCli({"gguf", "fit", "org/one-GGUF", "--gpu", "24GiB", "--format", "json"});
  ASSERT_EQ(gguf_fit.code, 0) << gguf_fit.err;
  EXPECT_TRUE(nlohmann::json::parse(gguf_fit.out)["command"].get<std::string>().starts_with(
      "llama-server --hf-repo org/one-GGUF --hf-file only.gguf"))
      << gguf_fit.out;
}

TEST_F(HubGgufCliTest, SecondRunAndOfflineUseTheCache) {
  auto first =
      RunCli({"estimate-memory", "org/quants-GGUF", "--gguf-file", "Q8_0", "--format", "json"});
  ASSERT_EQ(first.code, 0) << first.err;
  const int requests = hub_.hub_requests + hub_.cdn_requests;
  auto second =
      RunCli({"estimate-memory", "org/quants-GGUF", "--gguf-file", "Q8_0", "--format", "json"});
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(hub_.hub_requests + hub_.cdn_requests, requests);
  EXPECT_EQ(first.out, second.out);
  auto offline = RunCli({"estimate-memory", "org/quants-GGUF", "--gguf-file", "Q8_0", "--format",
                         "json", "--offline"});
  ASSERT_EQ(offline.code, 0) << offline.err;
  EXPECT_EQ(first.out, offline.out);
  auto not_cached =
      RunCli({"estimate-memory", "org/quants-GGUF", "--gguf-file", "Q4_0", "--offline"});
  EXPECT_EQ(not_cached.code, 1);
  EXPECT_NE(not_cached.err.find("offline"), std::string::npos) << not_cached.err;
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
