// The Hub client against the fake Hub (tests/fake_hub.h): every success and error path.

#include <filesystem>

#include <gtest/gtest.h>

#include "base/error_test_util.h"
#include "formats/hf_config_json.h"
#include "hub/net/http_client.h"
#include "hub/net/hub_test_util.h"
#include "memfit/hub.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)
namespace fs = std::filesystem;
using testing::FakeHub;
using testing::FakeRepo;
using testing::Resolve;
using testing::TestSettings;
using testing::TinyLlamaRepo;
using HubClientTest = testing::FakeHubTest;

size_t TensorCount(const ModelInputs& inputs) {
  size_t n = 0;
  for (const auto& [file, header] : inputs.safetensors) n += header.tensors.size();
  return n;
}

TEST_F(HubClientTest, ReadsAShardedModelThroughTheCdnRedirect) {
  FakeRepo repo = TinyLlamaRepo();
  repo.gated = true;
  hub.AddRepo(repo);
  s.token = FakeHub::kToken;
  auto r = Resolve(s, stats);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->from_cache);
  EXPECT_EQ(r->commit, testing::kCommit);
  ASSERT_TRUE(r->inputs.config);
  ASSERT_TRUE(r->inputs.index);
  EXPECT_EQ(r->inputs.index_name, "model.safetensors.index.json");
  ASSERT_EQ(r->inputs.safetensors.size(), 2u);
  EXPECT_EQ(r->inputs.safetensors[0].first, "model-00001-of-00002.safetensors");
  EXPECT_EQ(TensorCount(r->inputs), 21u);  // 1 + 9 in shard 1, 9 + 2 in shard 2
  EXPECT_EQ(r->inputs.name, "org/tiny-llama");
  EXPECT_EQ(stats.headers_fetched.load(), 2u);
  EXPECT_GT(hub.cdn_requests.load(), 0);
  EXPECT_TRUE(hub.hub_saw_token);
  EXPECT_FALSE(hub.cdn_saw_authorization) << "the token must not follow the redirect to the CDN";
  EXPECT_EQ(testing::AllBytesUnder(s.hub_cache).find(FakeHub::kToken), std::string::npos);
  EXPECT_EQ(testing::AllBytesUnder(s.memfit_cache).find(FakeHub::kToken), std::string::npos);
}

TEST_F(HubClientTest, SecondRunReadsOnlyTheCachesInTheHfLayout) {
  hub.AddRepo(TinyLlamaRepo());
  HubStats first_stats, second_stats;
  auto first = Resolve(s, first_stats);
  ASSERT_TRUE(first) << first.error().message;
  const int requests_after_first = hub.hub_requests + hub.cdn_requests;
  auto second = Resolve(s, second_stats);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(second_stats.requests.load(), 0u);
  EXPECT_EQ(hub.hub_requests + hub.cdn_requests, requests_after_first);
  EXPECT_EQ(second->inputs.assumptions, first->inputs.assumptions);
  ASSERT_EQ(second->inputs.safetensors.size(), 2u);
  EXPECT_EQ(TensorCount(second->inputs), TensorCount(first->inputs));
  // huggingface_hub's layout: refs/main, blobs/<etag>, snapshots/<commit>/<file> -> blob.
  const fs::path repo = fs::path(s.hub_cache) / "models--org--tiny-llama";
  EXPECT_EQ(testing::ReadFile((repo / "refs" / "main").string()), testing::kCommit);
  const fs::path config = repo / "snapshots" / testing::kCommit / "config.json";
  ASSERT_TRUE(fs::is_symlink(config));
  EXPECT_EQ(fs::read_symlink(config).string(),
            "../../blobs/" + testing::FakeSha1(testing::TinyLlamaConfig()));
  EXPECT_EQ(testing::ReadFile(config.string()), testing::TinyLlamaConfig());
  // Offline now works from the cache; the same for a second revision name of the same commit
  // once it has been resolved online.
  s.offline = true;
  HubStats offline_stats;
  EXPECT_TRUE(Resolve(s, offline_stats));
  HubFailure failure = HubFailure::kNone;
  auto tag = Resolve(s, offline_stats, "org/tiny-llama", {.revision = "v1.0"}, &failure);
  ASSERT_FALSE(tag);
  EXPECT_EQ(failure, HubFailure::kNotCached);
}

TEST_F(HubClientTest, OfflineWithNothingCached) {
  hub.AddRepo(TinyLlamaRepo());
  s.offline = true;
  HubFailure failure = HubFailure::kNone;
  auto r = Resolve(s, stats, "org/tiny-llama", {}, &failure);
  testing::ExpectErrorContains(r, "offline");
  EXPECT_EQ(failure, HubFailure::kNotCached);
  EXPECT_EQ(hub.hub_requests.load(), 0);
}

TEST_F(HubClientTest, RevisionsAreOneUrlSegment) {
  hub.AddRepo(TinyLlamaRepo());
  auto pr = Resolve(s, stats, "org/tiny-llama", {.revision = "refs/pr/1"});
  ASSERT_TRUE(pr) << pr.error().message;
  bool encoded = false;
  for (const auto& p : hub.paths()) encoded |= p.find("/revision/refs%2Fpr%2F1") != std::string::npos;
  EXPECT_TRUE(encoded);
  auto url = Resolve(s, stats, hub.endpoint() + "/org/tiny-llama/tree/v1.0");
  ASSERT_TRUE(url) << url.error().message;
  auto missing = Resolve(s, stats, "org/tiny-llama", {.revision = "nope"});
  testing::ExpectErrorContains(missing, "revision \"nope\" not found");
  auto conflict = Resolve(s, stats, hub.endpoint() + "/org/tiny-llama/tree/v1.0", {.revision = "v2"});
  ASSERT_FALSE(conflict);
}

TEST_F(HubClientTest, RepositoryNotFoundOrPrivate) {
  FakeRepo priv = TinyLlamaRepo("org/private");
  priv.is_private = true;
  hub.AddRepo(priv);
  for (const char* id : {"org/missing", "org/private"}) {
    auto r = Resolve(s, stats, id);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("repository not found"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("--token"), std::string::npos) << r.error().message;
  }
  s.token = FakeHub::kToken;
  auto with_token = Resolve(s, stats, "org/private");
  EXPECT_TRUE(with_token) << with_token.error().message;
}

TEST_F(HubClientTest, GatedRepositories) {
  FakeRepo gated = TinyLlamaRepo("org/gated");
  gated.gated = true;
  hub.AddRepo(gated);
  auto anonymous = Resolve(s, stats, "org/gated");
  ASSERT_FALSE(anonymous);
  EXPECT_NE(anonymous.error().message.find("is gated: accept its terms"), std::string::npos)
      << anonymous.error().message;
  EXPECT_NE(anonymous.error().message.find("HTTP 401"), std::string::npos);
  s.token = "hf_wrongtokenvalue";
  auto wrong = Resolve(s, stats, "org/gated");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("HTTP 403"), std::string::npos) << wrong.error().message;
  EXPECT_EQ(wrong.error().message.find("hf_wrongtokenvalue"), std::string::npos);
  s.token = FakeHub::kToken;
  EXPECT_TRUE(Resolve(s, stats, "org/gated"));
}

TEST_F(HubClientTest, EntryNotFoundAndIndexWithMissingShard) {
  FakeRepo broken = TinyLlamaRepo("org/broken");
  broken.files.erase("model-00002-of-00002.safetensors");
  hub.AddRepo(broken);
  auto r = Resolve(s, stats, "org/broken");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("lists model-00002-of-00002.safetensors, which is not in the "
                                   "repository"),
            std::string::npos)
      << r.error().message;
  hubnet::HttpClient client(s, stats);
  auto entry = client.Get({.url = hub.endpoint() + "/org/broken/resolve/main/nothing.json"},
                          {"org/broken", "main", "nothing.json"});
  ASSERT_FALSE(entry);
  EXPECT_NE(entry.error().message.find("file nothing.json not found at revision \"main\""),
            std::string::npos)
      << entry.error().message;
  auto route = client.Get({.url = hub.endpoint() + "/nothing-here"}, {"", "", ""});
  testing::ExpectErrorContains(route, "not found (HTTP 404)");
}

TEST_F(HubClientTest, RetriesRateLimitsAndServerErrors) {
  hub.AddRepo(TinyLlamaRepo());
  hub.fail_status = 429;
  hub.retry_after_s = 0;
  hub.fail_count = 2;  // max_attempts is 3: the third try succeeds
  auto ok = Resolve(s, stats);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(stats.retries.load(), 2u);
  HubSettings fresh = TestSettings(hub);
  hub.fail_count = 100;
  auto limited = Resolve(fresh, stats);
  testing::ExpectErrorContains(limited, "rate limited (HTTP 429) after 3 attempts");
  hub.fail_status = 503;
  hub.fail_count = 100;
  auto down = Resolve(TestSettings(hub), stats);
  testing::ExpectErrorContains(down, "server error (HTTP 503) after 3 attempts");
  hub.fail_status = 502;
  hub.fail_count = 1;
  EXPECT_TRUE(Resolve(TestSettings(hub), stats));
  hub.fail_status = 400;
  hub.fail_count = 1;
  auto bad = Resolve(TestSettings(hub), stats);
  testing::ExpectErrorContains(bad, "HTTP 400: injected failure");
}

TEST_F(HubClientTest, TimeoutsUnreachableAndTls) {
  hub.AddRepo(TinyLlamaRepo());
  s.metadata_timeout_ms = 100;
  s.max_attempts = 2;
  hub.stall_ms = 400;
  auto slow = Resolve(s, stats);
  testing::ExpectErrorContains(slow, "timed out after 100 ms, 2 attempts");
  hub.stall_ms = 0;
  HubSettings nowhere = TestSettings(hub);
  nowhere.endpoint = "http://127.0.0.1:1";
  HubFailure failure = HubFailure::kNone;
  auto unreachable = Resolve(nowhere, stats, "org/tiny-llama", {}, &failure);
  testing::ExpectErrorContains(unreachable, "cannot reach 127.0.0.1:1");
  EXPECT_EQ(failure, HubFailure::kUnreachable);
  HubSettings tls = TestSettings(hub);
  tls.endpoint = "https://" + hub.endpoint().substr(7);  // TLS client, plain-HTTP server
  auto handshake = Resolve(tls, stats);
  testing::ExpectErrorContains(handshake, "TLS failure");
}

TEST_F(HubClientTest, ServerIgnoringRangeIsReadOnlyAsFarAsNeeded) {
  FakeRepo big;
  big.id = "org/big";
  big.commit = testing::FakeSha1("big");
  big.files["model.safetensors"] =
      testing::MakeSafetensors({{"w", "F32", {4}}});  // 16 data bytes stored...
  // ...but the file claims 64 MiB of weights: a header that says so.
  big.files["model.safetensors"] = testing::MakeSafetensorsRaw(
      R"({"w":{"dtype":"F32","shape":[16777216],"data_offsets":[0,67108864]}})", 0);
  big.logical_sizes["model.safetensors"] = big.files["model.safetensors"].size() + 67108864;
  hub.AddRepo(big);
  hub.ranges = false;
  auto r = Resolve(s, stats, "org/big");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->inputs.safetensors.size(), 1u);
  EXPECT_EQ(r->inputs.safetensors[0].second.data_bytes, 67108864u);
  // One 128 KiB first read plus what curl had buffered when it stopped: far below 64 MiB.
  EXPECT_LT(stats.bytes.load(), 8u << 20);
}

TEST_F(HubClientTest, ShortResponsesAndOversizedHeaders) {
  hub.AddRepo(TinyLlamaRepo());
  FakeRepo huge;
  huge.id = "org/huge-header";
  huge.commit = testing::FakeSha1("huge");
  std::string file(8, '\0');
  uint64_t n = 200'000'000;  // over the 100,000,000-byte cap
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  huge.files["model.safetensors"] = file + "{}";
  huge.logical_sizes["model.safetensors"] = 300'000'000;
  hub.AddRepo(huge);
  auto capped = Resolve(TestSettings(hub), stats, "org/huge-header");
  testing::ExpectErrorContains(capped, "exceeds the cap of 100000000 bytes");
  hub.short_bodies = true;
  auto shorter = Resolve(TestSettings(hub), stats);
  testing::ExpectErrorContains(shorter, "response shorter than asked");
}

TEST_F(HubClientTest, PaginatedTree) {
  hub.AddRepo(TinyLlamaRepo());
  hub.tree_page_size = 2;
  auto r = Resolve(s, stats);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->inputs.safetensors.size(), 2u);
}

TEST_F(HubClientTest, DiffusersAndSentenceTransformersLayouts) {
  FakeRepo diffusers;
  diffusers.id = "org/pipe";
  diffusers.commit = testing::FakeSha1("pipe");
  diffusers.files["model_index.json"] =
      R"({"_class_name": "StableDiffusionPipeline", "unet": ["diffusers", "UNet2DConditionModel"],
          "text_encoder": ["transformers", "CLIPTextModel"], "scheduler": ["diffusers", "PNDMScheduler"],
          "safety_checker": [null, null]})";
  diffusers.files["unet/diffusion_pytorch_model.safetensors"] = testing::MakeSafetensors({{"conv.weight", "F16", {8, 8}}});
  diffusers.files["unet/diffusion_pytorch_model.fp16.safetensors"] = testing::MakeSafetensors({{"conv.weight", "F16", {8, 8}}});
  diffusers.files["text_encoder/model.safetensors"] = testing::MakeSafetensors({{"conv.weight", "F32", {4}}});
  diffusers.files["scheduler/scheduler_config.json"] = "{}";
  hub.AddRepo(diffusers);
  FakeRepo st;
  st.id = "org/sbert";
  st.commit = testing::FakeSha1("sbert");
  st.files = testing::TinyLlamaFiles();
  st.files["modules.json"] = R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                                 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                                 {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}])";
  st.files["2_Dense/model.safetensors"] = testing::MakeSafetensors({{"linear.weight", "F32", {8, 64}}});
  st.files["1_Pooling/config.json"] = "{}";
  hub.AddRepo(st);

  auto pipe = Resolve(s, stats, "org/pipe");
  ASSERT_TRUE(pipe) << pipe.error().message;
  EXPECT_EQ(pipe->layout, "diffusers");
  ASSERT_EQ(pipe->inputs.safetensors.size(), 2u);  // the fp16 variant is skipped
  EXPECT_EQ(pipe->inputs.safetensors[0].first, "text_encoder/model.safetensors");
  EXPECT_EQ(pipe->inputs.safetensors[0].second.tensors[0].name, "text_encoder.conv.weight");
  EXPECT_EQ(pipe->inputs.safetensors[1].second.tensors[0].name, "unet.conv.weight");
  EXPECT_FALSE(pipe->inputs.config);

  auto sbert = Resolve(s, stats, "org/sbert");
  ASSERT_TRUE(sbert) << sbert.error().message;
  EXPECT_EQ(sbert->layout, "sentence-transformers");
  ASSERT_TRUE(sbert->inputs.config);
  ASSERT_EQ(sbert->inputs.safetensors.size(), 3u);  // two shards + 2_Dense
  EXPECT_EQ(sbert->inputs.safetensors[0].first, "model-00001-of-00002.safetensors");
  EXPECT_EQ(sbert->inputs.safetensors[2].first, "2_Dense/model.safetensors");
  EXPECT_EQ(sbert->inputs.safetensors[2].second.tensors[0].name, "2_Dense.linear.weight");
}

// NVIDIA ModelOpt releases keep their quantization in hf_quant_config.json beside config.json:
// the Hub client fetches it with the other small files and merges it into the config, online
// and from memfit's cache, as a local folder does.
TEST_F(HubClientTest, HfQuantConfigBesideConfigIsMerged) {
  testing::FakeRepo repo = testing::TinyLlamaRepo("org/tiny-nvfp4");
  repo.files["hf_quant_config.json"] =
      R"({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4",)"
      R"( "group_size": 16, "exclude_modules": ["lm_head"]}})";
  hub.AddRepo(repo);
  for (int run = 0; run < 2; ++run) {
    HubStats run_stats;
    auto r = testing::Resolve(s, run_stats, "org/tiny-nvfp4");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->from_cache, run == 1);
    ASSERT_TRUE(r->inputs.config);
    const nlohmann::json* q = QuantizationConfigJson(*r->inputs.config);
    ASSERT_NE(q, nullptr) << "run " << run;
    EXPECT_EQ(q->value("quant_algo", ""), "NVFP4");
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
