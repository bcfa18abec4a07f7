// GGUF repositories over the (fake) Hub: one file, a split model, a choice among several, the
// cached second run, offline, and truncated or hostile headers.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/error_test_util.h"
#include "gguf_models.h"
#include "hub/net/hub_test_util.h"
#include "memfit/describe.h"
#include "memfit/hub.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)
namespace fs = std::filesystem;
using testing::FakeHub;
using testing::FakeRepo;
using testing::GgufShape;
using testing::GgufWriter;
using testing::Resolve;
using HubGgufTest = testing::FakeHubTest;

// A GGUF file in a fake repository: the header stored, the tensor data left virtual (zeros).
void AddGguf(FakeRepo& repo, const std::string& path, const GgufWriter& w) {
  repo.files[path] = w.Header();
  repo.logical_sizes[path] = repo.files[path].size() + w.DataBytes();
}

// A llama-shaped model with a Qwen-sized vocabulary (151,936 tokens and as many merges): a
// header of about 6 MiB, like the real GGUF files of such models.
GgufWriter BigVocabModel() {
  GgufShape shape;
  shape.n_vocab = 151936;
  shape.extra_keys = [](GgufWriter& w) {
    std::vector<std::string> tokens, merges;
    for (int i = 0; i < 151936; ++i) {
      tokens.push_back(fmt::format("tok{:06d}", i));
      merges.push_back(fmt::format("m{:05d} n{:05d}", i % 99999, i / 7));
    }
    w.StrArray("tokenizer.ggml.tokens", tokens).StrArray("tokenizer.ggml.merges", merges);
  };
  return testing::MakeGgufWriter(shape);
}

GgufShape Projector() {
  GgufShape shape;
  shape.arch = "clip";
  return shape;
}

FakeRepo GgufRepo(const std::string& id) {
  FakeRepo repo;
  repo.id = id;
  repo.commit = testing::FakeSha1(id);
  return repo;
}

std::string GgufCacheDir(const HubSettings& s) { return s.memfit_cache + "/gguf-headers"; }

TEST_F(HubGgufTest, OneFileInAFewRangesThenFromTheCache) {
  FakeRepo repo = GgufRepo("org/big-vocab-GGUF");
  const GgufWriter w = BigVocabModel();
  ASSERT_GT(w.Header().size(), 5u << 20);
  AddGguf(repo, "model-Q8_0.gguf", w);
  repo.files["README.md"] = "# a GGUF repository\n";
  hub.AddRepo(repo);
  auto r = Resolve(s, stats, "org/big-vocab-GGUF");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->layout, "gguf");
  EXPECT_EQ(r->gguf_file, "model-Q8_0.gguf");
  ASSERT_EQ(r->inputs.gguf.size(), 1u);
  EXPECT_EQ(r->inputs.gguf[0].name, "model-Q8_0.gguf");
  EXPECT_EQ(r->inputs.gguf[0].file.header_bytes +
                (r->inputs.gguf[0].file.data_offset - r->inputs.gguf[0].file.header_bytes),
            r->inputs.gguf[0].file.data_offset);
  auto model = DescribeModel(r->inputs);
  ASSERT_TRUE(model) << model.error().message;
  EXPECT_EQ(model->name, "org/big-vocab-GGUF");
  // Info, tree, the redirect, then 1 + 2 + 4 MiB of read-ahead for the 6 MiB header.
  EXPECT_EQ(hub.hub_requests.load(), 3);
  EXPECT_EQ(hub.cdn_requests.load(), 3);
  EXPECT_EQ(stats.headers_fetched.load(), 1u);
  // The cache keeps the header bytes (and at most one 64 KiB reader chunk more).
  ASSERT_TRUE(fs::is_directory(GgufCacheDir(s)));
  for (const auto& e : fs::directory_iterator(GgufCacheDir(s))) {
    EXPECT_LE(e.file_size(), w.Header().size() + (64u << 10) + 16);
  }

  const int before = hub.hub_requests + hub.cdn_requests;
  HubStats cached_stats;
  auto cached = Resolve(s, cached_stats, "org/big-vocab-GGUF");
  ASSERT_TRUE(cached) << cached.error().message;
  EXPECT_TRUE(cached->from_cache);
  EXPECT_EQ(cached_stats.requests.load(), 0u);
  EXPECT_EQ(hub.hub_requests + hub.cdn_requests, before);
  ASSERT_EQ(cached->inputs.gguf.size(), 1u);
  EXPECT_EQ(cached->inputs.gguf[0].file.tensors.size(), r->inputs.gguf[0].file.tensors.size());
  EXPECT_EQ(cached->inputs.gguf[0].file.metadata.size(), r->inputs.gguf[0].file.metadata.size());
  s.offline = true;
  HubStats offline_stats;
  auto offline = Resolve(s, offline_stats, "org/big-vocab-GGUF");
  ASSERT_TRUE(offline) << offline.error().message;
  EXPECT_EQ(offline_stats.requests.load(), 0u);
}

TEST_F(HubGgufTest, GatedRepositoryTokenStaysOnTheHub) {
  FakeRepo repo = GgufRepo("org/gated-GGUF");
  repo.gated = true;
  AddGguf(repo, "small.gguf", testing::MakeGgufWriter(GgufShape{}));
  hub.AddRepo(repo);
  auto anonymous = Resolve(s, stats, "org/gated-GGUF");
  testing::ExpectErrorContains(anonymous, "is gated: accept its terms");
  s.token = FakeHub::kToken;
  auto r = Resolve(s, stats, "org/gated-GGUF");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(hub.hub_saw_token);
  EXPECT_FALSE(hub.cdn_saw_authorization);
  EXPECT_EQ(testing::AllBytesUnder(s.hub_cache).find(FakeHub::kToken), std::string::npos);
  EXPECT_EQ(testing::AllBytesUnder(s.memfit_cache).find(FakeHub::kToken), std::string::npos);
}

TEST_F(HubGgufTest, MalformedCacheFilesAreAMiss) {
  FakeRepo repo = GgufRepo("org/small-GGUF");
  AddGguf(repo, "small.gguf", testing::MakeGgufWriter(GgufShape{}));
  hub.AddRepo(repo);
  ASSERT_TRUE(Resolve(s, stats, "org/small-GGUF"));
  for (const std::string& garbage :
       {std::string("MFGGUF01"), std::string("MFGGUF01") + std::string(8, '\x01') + "GGUF",
        std::string(100, 'x'), std::string()}) {
    for (const auto& e : fs::directory_iterator(GgufCacheDir(s))) {
      std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << garbage;
    }
    const int before = hub.cdn_requests;
    HubStats again;
    auto r = Resolve(s, again, "org/small-GGUF");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_GT(hub.cdn_requests.load(), before) << "a malformed cache file must be read again";
    EXPECT_EQ(again.headers_fetched.load(), 1u);
  }
}

TEST_F(HubGgufTest, SplitModelsAndTheChoiceAmongSeveral) {
  FakeRepo repo = GgufRepo("org/quants-GGUF");
  auto shard = [](uint16_t no, std::vector<std::string> names) {
    std::vector<std::pair<std::string, uint64_t>> tensors;
    for (auto& n : names) tensors.emplace_back(std::move(n), 64);
    return testing::TinySplitShard(no, tensors);
  };
  AddGguf(repo, "Q4_K_M/m-Q4_K_M-00001-of-00002.gguf",
          shard(0, {"token_embd.weight", "blk.0.attn_q.weight"}));
  AddGguf(repo, "Q4_K_M/m-Q4_K_M-00002-of-00002.gguf",
          shard(1, {"blk.1.attn_q.weight", "output.weight"}));
  AddGguf(repo, "m-Q8_0.gguf", testing::MakeGgufWriter(GgufShape{}));
  AddGguf(repo, "mmproj-m-F16.gguf", testing::MakeGgufWriter(Projector()));
  FakeRepo broken = repo;
  broken.id = "org/broken-split-GGUF";
  broken.files.erase("Q4_K_M/m-Q4_K_M-00002-of-00002.gguf");
  hub.AddRepo(repo);
  hub.AddRepo(broken);

  auto ambiguous = Resolve(s, stats, "org/quants-GGUF");
  ASSERT_FALSE(ambiguous);
  EXPECT_EQ(ambiguous.error().message,
            "org/quants-GGUF: 3 GGUF models; choose one with --gguf-file (a file, or a part of its "
            "name such as Q4_K_M): Q4_K_M/m-Q4_K_M-00001-of-00002.gguf (2 files), m-Q8_0.gguf, "
            "mmproj-m-F16.gguf");
  // Any file of the split names the whole split, in order.
  auto split =
      Resolve(s, stats, "org/quants-GGUF", {.gguf_file = "Q4_K_M/m-Q4_K_M-00002-of-00002.gguf"});
  ASSERT_TRUE(split) << split.error().message;
  EXPECT_EQ(split->gguf_file, "Q4_K_M/m-Q4_K_M-00001-of-00002.gguf");
  ASSERT_EQ(split->inputs.gguf.size(), 2u);
  EXPECT_EQ(split->inputs.gguf[1].name, "Q4_K_M/m-Q4_K_M-00002-of-00002.gguf");
  auto model = DescribeModel(split->inputs);
  ASSERT_TRUE(model) << model.error().message;
  EXPECT_EQ(model->tensors.size(), 4u);
  // A quantization names a model when exactly one matches.
  auto by_quant = Resolve(s, stats, "org/quants-GGUF", {.gguf_file = "q8_0"});
  ASSERT_TRUE(by_quant) << by_quant.error().message;
  EXPECT_EQ(by_quant->gguf_file, "m-Q8_0.gguf");
  EXPECT_NE(std::find(by_quant->inputs.assumptions.begin(), by_quant->inputs.assumptions.end(),
                      "--gguf-file q8_0: the GGUF model m-Q8_0.gguf"),
            by_quant->inputs.assumptions.end());
  auto several = Resolve(s, stats, "org/quants-GGUF", {.gguf_file = "m-"});
  testing::ExpectErrorContains(several, "matches 3 GGUF models");
  auto none = Resolve(s, stats, "org/quants-GGUF", {.gguf_file = "Q2_K"});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("--gguf-file Q2_K is not in the repository (GGUF files: "),
            std::string::npos)
      << none.error().message;
  // A file URL chooses too.
  auto by_url = Resolve(s, stats, hub.endpoint() + "/org/quants-GGUF/blob/main/m-Q8_0.gguf");
  ASSERT_TRUE(by_url) << by_url.error().message;
  EXPECT_EQ(by_url->gguf_file, "m-Q8_0.gguf");
  // A split with a file missing.
  auto incomplete = Resolve(s, stats, "org/broken-split-GGUF", {.gguf_file = "Q4_K_M"});
  ASSERT_FALSE(incomplete);
  EXPECT_EQ(
      incomplete.error().message,
      "org/broken-split-GGUF: split file Q4_K_M/m-Q4_K_M-00002-of-00002.gguf of the 2 files of "
      "Q4_K_M/m-Q4_K_M-00001-of-00002.gguf is not in the repository");
}

// A GGUF file downloaded into the Hugging Face cache (`huggingface-cli download REPO FILE`), its
// tensor data left sparse. memfit never ran.
void DownloadIntoHfCache(const HubSettings& s, const std::string& repo_id,
                         const std::string& commit, const std::string& path, const GgufWriter& w,
                         char etag_digit) {
  testing::WriteHfCacheFile(s.hub_cache, repo_id, commit, path, w.Header(),
                            std::string(64, etag_digit), w.Header().size() + w.DataBytes());
}

TEST_F(HubGgufTest, GgufFilesDownloadedIntoTheHfCacheAreFoundWithoutMemfitsFileList) {
  // Online cases must not need the fake Hub; the repository is there to show who decided.
  FakeRepo repo = GgufRepo("org/local-GGUF");
  AddGguf(repo, "m-Q4_K_M.gguf", testing::MakeGgufWriter(GgufShape{}));
  AddGguf(repo, "m-Q8_0.gguf", testing::MakeGgufWriter(GgufShape{}));
  AddGguf(repo, "m-F16.gguf", testing::MakeGgufWriter(GgufShape{}));
  hub.AddRepo(repo);
  GgufShape small;
  small.n_vocab = 48;  // tells the downloaded file from the fake Hub's
  DownloadIntoHfCache(s, "org/local-GGUF", repo.commit, "m-Q4_K_M.gguf",
                      testing::MakeGgufWriter(small), 'a');

  // Offline, one file downloaded: that model, no request, and the guess said.
  s.offline = true;
  auto one = Resolve(s, stats, "org/local-GGUF");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(one->layout, "gguf");
  EXPECT_EQ(one->gguf_file, "m-Q4_K_M.gguf");
  EXPECT_TRUE(one->from_cache);
  EXPECT_EQ(one->commit, repo.commit);
  EXPECT_EQ(stats.requests.load(), 0u);
  EXPECT_EQ(stats.headers_cached.load(), 1u);
  EXPECT_NE(std::find(one->inputs.assumptions.begin(), one->inputs.assumptions.end(),
                      "file list from the Hugging Face cache snapshot (the .gguf files downloaded "
                      "there; the Hub may hold others)"),
            one->inputs.assumptions.end());
  auto model = DescribeModel(one->inputs);
  ASSERT_TRUE(model) << model.error().message;
  EXPECT_EQ(model->name, "org/local-GGUF");

  // Two downloaded, no choice: the choice is asked for among what is in the cache.
  DownloadIntoHfCache(s, "org/local-GGUF", repo.commit, "sub/m-Q8_0.gguf",
                      testing::MakeGgufWriter(small), 'b');
  auto ambiguous = Resolve(s, stats, "org/local-GGUF");
  ASSERT_FALSE(ambiguous);
  EXPECT_EQ(ambiguous.error().message,
            "org/local-GGUF: 2 GGUF models; choose one with --gguf-file (a file, or a part of its "
            "name such as Q4_K_M): m-Q4_K_M.gguf, sub/m-Q8_0.gguf (offline: only the 2 .gguf files "
            "in the Hugging Face cache snapshot " + repo.commit.substr(0, 12) +
                " were looked at)");
  auto q8 = Resolve(s, stats, "org/local-GGUF", {.gguf_file = "Q8_0"});
  ASSERT_TRUE(q8) << q8.error().message;
  EXPECT_EQ(q8->gguf_file, "sub/m-Q8_0.gguf");
  auto absent = Resolve(s, stats, "org/local-GGUF", {.gguf_file = "F16"});
  ASSERT_FALSE(absent);
  EXPECT_NE(absent.error().message.find("--gguf-file F16 is not in the repository"),
            std::string::npos)
      << absent.error().message;
  EXPECT_EQ(stats.requests.load(), 0u);
  EXPECT_EQ(hub.hub_requests + hub.cdn_requests, 0);

  // Online, a choice that was downloaded: still no request.
  s.offline = false;
  HubStats online_stats;
  auto chosen = Resolve(s, online_stats, "org/local-GGUF", {.gguf_file = "Q4_K_M"});
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->gguf_file, "m-Q4_K_M.gguf");
  EXPECT_EQ(online_stats.requests.load(), 0u);
  // Online without a choice, or with one not downloaded: the Hub's file list decides.
  auto listed = Resolve(s, online_stats, "org/local-GGUF");
  testing::ExpectErrorContains(listed, "3 GGUF models; choose one");
  auto f16 = Resolve(s, online_stats, "org/local-GGUF", {.gguf_file = "F16"});
  ASSERT_TRUE(f16) << f16.error().message;
  EXPECT_EQ(f16->gguf_file, "m-F16.gguf");
  EXPECT_GT(hub.hub_requests.load(), 0);
}

TEST_F(HubGgufTest, TheOneModelBesideAProjectorIsChosen) {
  FakeRepo repo = GgufRepo("org/vision-GGUF");
  AddGguf(repo, "model-Q4_0.gguf", testing::MakeGgufWriter(GgufShape{}));
  AddGguf(repo, "mmproj-model-f16.gguf", testing::MakeGgufWriter(Projector()));
  hub.AddRepo(repo);
  auto r = Resolve(s, stats, "org/vision-GGUF");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->gguf_file, "model-Q4_0.gguf");
  EXPECT_EQ(r->inputs.assumptions.back(),
            "the GGUF model model-Q4_0.gguf (the repository's other GGUF files are projectors: "
            "mmproj-model-f16.gguf)");
}

TEST_F(HubGgufTest, TruncatedAndHostileHeadersAreOneLineErrors) {
  FakeRepo repo = GgufRepo("org/hostile-GGUF");
  // Cut in the middle of the vocabulary: the file ends where the header says more follows.
  repo.files["truncated.gguf"] = BigVocabModel().Header().substr(0, 3 << 20);
  // A string length of 2^40 bytes.
  GgufWriter huge;
  huge.Raw("general.name", 8, [&](std::string& o) { huge.Put<uint64_t>(o, 1ull << 40); });
  repo.files["huge-string.gguf"] = huge.Header() + std::string(64, 'x');
  repo.logical_sizes["huge-string.gguf"] = 2ull << 40;
  // Not a GGUF file at all.
  repo.files["not.gguf"] = std::string(4096, 'z');
  hub.AddRepo(repo);
  for (const char* file : {"truncated.gguf", "huge-string.gguf", "not.gguf"}) {
    HubStats file_stats;
    auto r = Resolve(s, file_stats, "org/hostile-GGUF", {.gguf_file = file});
    ASSERT_FALSE(r) << file;
    const std::string& m = r.error().message;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(m.find(std::string("gguf: ") + hub.endpoint() + "/org/hostile-GGUF/resolve/"),
              std::string::npos)
        << m;
    EXPECT_LT(file_stats.bytes.load(), 8u << 20) << file;
  }
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
