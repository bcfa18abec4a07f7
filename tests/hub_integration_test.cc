// The same model served by the fake Hub and read from a local directory gives the same
// `estimate-memory --format json`; the second (cached) and offline runs give the same bytes as
// the first. The CLI reads the Hub settings from the environment, as a user's shell would set it.

#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hub_cli_support.h"

namespace memfit {
namespace {
using testing::FakeHub;
using testing::ScopedEnv;

using RunResult = testing::CliRun;
using testing::PointAt;
using testing::RunCli;

TEST(HubIntegrationTest, HubAndLocalDirectoryGiveTheSameJson) {
  FakeHub hub;
  hub.AddRepo(testing::TinyLlamaRepo());
  ScopedEnv env;
  PointAt(env, hub.endpoint());
  const std::string dir = testing::TempDir() + "/tiny-llama";
  testing::WriteFiles(dir, testing::TinyLlamaFiles());

  RunResult local = RunCli({"estimate-memory", dir, "--format", "json"});
  ASSERT_EQ(local.code, 0) << local.err;
  RunResult online = RunCli({"estimate-memory", "org/tiny-llama", "--format", "json"});
  ASSERT_EQ(online.code, 0) << online.err;
  const int requests = hub.hub_requests + hub.cdn_requests;
  RunResult cached = RunCli({"estimate-memory", "org/tiny-llama", "--format", "json"});
  ASSERT_EQ(cached.code, 0) << cached.err;
  EXPECT_EQ(hub.hub_requests + hub.cdn_requests, requests) << "the second run must not use the network";
  RunResult offline = RunCli({"estimate-memory", "org/tiny-llama", "--format", "json", "--offline"});
  ASSERT_EQ(offline.code, 0) << offline.err;
  RunResult by_url = RunCli({"estimate-memory", hub.endpoint() + "/org/tiny-llama", "--format", "json"});
  ASSERT_EQ(by_url.code, 0) << by_url.err;

  // First, cached, offline and URL runs: byte-identical.
  EXPECT_EQ(online.out, cached.out);
  EXPECT_EQ(online.out, offline.out);
  EXPECT_EQ(online.out, by_url.out);
  // Hub vs local directory: byte-identical once the two fields that name the source are set
  // aside: "model" (the Hub id vs the folder name) and "assumptions" (the Hub adds the commit).
  auto hub_json = nlohmann::json::parse(online.out);
  auto local_json = nlohmann::json::parse(local.out);
  EXPECT_EQ(hub_json["model"], "org/tiny-llama");
  EXPECT_EQ(local_json["model"], "tiny-llama");
  auto hub_assumptions = hub_json["assumptions"];
  auto local_assumptions = local_json["assumptions"];
  ASSERT_FALSE(hub_assumptions.empty());
  EXPECT_EQ(hub_assumptions[0], "Hub revision main is commit " + testing::kCommit);
  hub_assumptions.erase(0);
  EXPECT_EQ(hub_assumptions, local_assumptions);
  for (auto* j : {&hub_json, &local_json}) {
    j->erase("model");
    j->erase("assumptions");
  }
  EXPECT_EQ(hub_json.dump(2), local_json.dump(2));
}

TEST(HubIntegrationTest, CliErrorsAreOneLineWithExitCodeOne) {
  FakeHub hub;
  testing::FakeRepo gated = testing::TinyLlamaRepo("org/gated");
  gated.gated = true;
  hub.AddRepo(gated);
  ScopedEnv env;
  PointAt(env, hub.endpoint());
  env.Set("HF_HUB_DOWNLOAD_TIMEOUT", "5");
  RunResult missing = RunCli({"estimate-memory", "org/does-not-exist"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("memfit: error: org/does-not-exist: repository not found"), std::string::npos)
      << missing.err;
  RunResult with_token = RunCli({"estimate-memory", "org/gated", "--token", "hf_notTheRightOne"});
  EXPECT_EQ(with_token.code, 1);
  EXPECT_NE(with_token.err.find("is gated"), std::string::npos) << with_token.err;
  EXPECT_EQ(with_token.err.find("hf_notTheRightOne"), std::string::npos);
  env.Set("HF_TOKEN", FakeHub::kToken);
  RunResult ok = RunCli({"estimate-memory", "org/gated", "--format", "json"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ((ok.out + ok.err).find(FakeHub::kToken), std::string::npos);
  env.Set("HF_HUB_OFFLINE", "1");
  RunResult offline = RunCli({"estimate-memory", "org/never-seen"});
  EXPECT_EQ(offline.code, 1);
  EXPECT_NE(offline.err.find("offline"), std::string::npos) << offline.err;
  EXPECT_EQ(std::count(offline.err.begin(), offline.err.end(), '\n'), 1) << offline.err;
}

TEST(HubIntegrationTest, UnreachableHubFallsBackToTheCatalog) {
  ScopedEnv env;
  PointAt(env, "http://127.0.0.1:1");
  RunResult r = RunCli({"estimate-memory", "meta-llama/Llama-3.2-1B", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("the Hub was not used (cannot reach 127.0.0.1:1"), std::string::npos) << r.out;
  RunResult unknown = RunCli({"estimate-memory", "org/unknown-model"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("model not found locally"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("cannot reach 127.0.0.1:1"), std::string::npos) << unknown.err;
}

TEST(HubIntegrationTest, ConfigOnlySnapshotStandsInWhenTheHubFails) {
  FakeHub hub;  // knows no repository: every id is RepoNotFound
  ScopedEnv env;
  PointAt(env, hub.endpoint());
  const std::string sha = testing::FakeSha1("snapshot");
  testing::WriteFiles(std::getenv("HF_HUB_CACHE"),
                      {{"models--acme--local/refs/main", sha},
                       {"models--acme--local/snapshots/" + sha + "/config.json", testing::TinyLlamaConfig()}});
  RunResult r = RunCli({"estimate-memory", "acme/local", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("the Hub was not used (acme/local: repository not found"), std::string::npos)
      << r.out;
  // A catalog entry stands in too (a gated model without a token), saying why.
  RunResult catalog = RunCli({"estimate-memory", "meta-llama/Llama-3.2-1B", "--format", "json"});
  EXPECT_EQ(catalog.code, 0) << catalog.err;
  EXPECT_NE(catalog.out.find("the Hub was not used (meta-llama/Llama-3.2-1B: repository not found"),
            std::string::npos)
      << catalog.out;
  // Offline, the catalog answers.
  RunResult offline = RunCli({"estimate-memory", "meta-llama/Llama-3.2-1B", "--offline"});
  EXPECT_EQ(offline.code, 0) << offline.err;
}

}  // namespace
}  // namespace memfit
