// The same model served by the fake Hub and read from an HF cache snapshot of the same repository
// and commit gives byte-identical `estimate-memory --format json`, and so do the second (cached),
// offline and URL runs; a plain directory of the same files differs in exactly the fields that
// name the source. The CLI reads the Hub settings from the environment, as a user's shell would.

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hub_cli_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)
namespace fs = std::filesystem;
using testing::FakeHub;
using testing::ScopedEnv;

using RunResult = testing::CliRun;
using testing::PointAt;
using testing::RunCli;

// An HF cache snapshot of `repo` in huggingface_hub's layout, as `snapshot_download` leaves it:
// refs/main, blobs/{etag} holding the bytes, snapshots/{commit}/{path} -> ../../blobs/{etag}.
void WriteHfSnapshot(const std::string& hub_cache, const testing::FakeRepo& repo) {
  for (const auto& [path, bytes] : repo.files) {
    const bool lfs = path.ends_with(".safetensors");
    const std::string etag = lfs ? testing::FakeSha256(bytes) : testing::FakeSha1(bytes);
    testing::WriteHfCacheFile(hub_cache, repo.id, repo.commit, path, bytes, etag);
  }
}

TEST(HubIntegrationTest, HubAndAnHfCacheSnapshotGiveByteIdenticalJson) {
  // The same repository id, commit and files: once read from the Hub with ranges, once from the
  // local files huggingface_hub downloaded. The output describes the model, not the transport.
  FakeHub hub;
  const testing::FakeRepo repo = testing::TinyLlamaRepo();
  hub.AddRepo(repo);
  ScopedEnv env;
  PointAt(env, hub.endpoint());
  RunResult online = RunCli({"estimate-memory", "org/tiny-llama", "--format", "json"});
  ASSERT_EQ(online.code, 0) << online.err;
  const int requests = hub.hub_requests + hub.cdn_requests;
  ASSERT_GT(requests, 0);
  RunResult cached = RunCli({"estimate-memory", "org/tiny-llama", "--format", "json"});
  ASSERT_EQ(cached.code, 0) << cached.err;
  EXPECT_EQ(hub.hub_requests + hub.cdn_requests, requests) << "the second run must not use the network";
  RunResult offline = RunCli({"estimate-memory", "org/tiny-llama", "--format", "json", "--offline"});
  ASSERT_EQ(offline.code, 0) << offline.err;
  RunResult by_url = RunCli({"estimate-memory", hub.endpoint() + "/org/tiny-llama", "--format", "json"});
  ASSERT_EQ(by_url.code, 0) << by_url.err;

  ScopedEnv snapshot_env;
  PointAt(snapshot_env, hub.endpoint());  // fresh, empty caches
  WriteHfSnapshot(std::getenv("HF_HUB_CACHE"), repo);
  RunResult snapshot = RunCli({"estimate-memory", "org/tiny-llama", "--format", "json"});
  ASSERT_EQ(snapshot.code, 0) << snapshot.err;
  snapshot_env.Set("HF_HUB_OFFLINE", "1");
  RunResult snapshot_offline = RunCli({"estimate-memory", "org/tiny-llama", "--format", "json"});
  ASSERT_EQ(snapshot_offline.code, 0) << snapshot_offline.err;
  EXPECT_EQ(hub.hub_requests + hub.cdn_requests, requests) << "the snapshot holds every file";

  for (const RunResult* r : {&cached, &offline, &by_url, &snapshot, &snapshot_offline}) {
    EXPECT_EQ(r->out, online.out);
  }
  EXPECT_NE(online.out.find("\"Hub revision main is commit " + testing::kCommit + "\""),
            std::string::npos)
      << online.out;
}

TEST(HubIntegrationTest, HubAndAPlainDirectoryDifferOnlyInTheModelName) {
  // A directory holding the same files names neither the repository nor the commit: the JSON
  // differs in exactly "model" (the folder name) and the commit assumption, nothing else.
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
  const auto patch = nlohmann::json::diff(nlohmann::json::parse(local.out),
                                          nlohmann::json::parse(online.out));
  // (The directory's assumption list is empty: the commit is appended to it.)
  const auto expected = nlohmann::json::parse(R"([
    {"op": "add", "path": "/assumptions/-", "value": "Hub revision main is commit )" +
                                              testing::kCommit + R"("},
    {"op": "replace", "path": "/model", "value": "org/tiny-llama"}
  ])");
  EXPECT_EQ(patch, expected) << patch.dump(2);
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

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
