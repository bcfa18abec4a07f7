// Finding a model on this machine (hub/local/local_source.cc): a directory, a single file, the
// Hugging Face cache (models--org--name/refs/<rev> + snapshots/<sha>/), the catalog, and the
// inputs that must be refused or passed over: missing shards or snapshots, a refs file that is
// not a commit, a revision that would leave the cache. Every case runs in a fresh temp directory.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "hub_fixtures.h"  // ScopedEnv
#include "memfit/local_source.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

namespace fs = std::filesystem;
using testing::MakeSafetensors;
using testing::ScopedEnv;
using testing::TempDir;

void Write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// One F32 tensor of 2 x 2 (16 bytes of data).
std::string OneTensor(const std::string& name) { return MakeSafetensors({{name, "F32", {2, 2}}}); }

const std::string kConfig = R"({"model_type": "toy", "architectures": ["ToyForCausalLM"]})";
const std::string kSha = "0123456789abcdef0123456789abcdef01234567";  // 40 hex digits

Result<LocalResolution> Resolve(const std::string& spec, const std::string& cache,
                                std::string revision = "main", bool catalog = false) {
  return ResolveLocalModel(spec, {.revision = std::move(revision), .hf_hub_cache = cache,
                                  .use_catalog = catalog});
}

TEST(LocalSourceTest, DirectoryWithConfigAndOneWeightFile) {
  const fs::path dir = fs::path(TempDir()) / "my-model";
  Write(dir / "config.json", kConfig);
  Write(dir / "model.safetensors", OneTensor("w"));
  auto r = Resolve(dir.string(), "");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kind, InputKind::kDirectory);
  EXPECT_EQ(r->inputs.name, "my-model");
  EXPECT_EQ(r->inputs.location, dir.string());
  ASSERT_TRUE(r->inputs.config);
  EXPECT_EQ(r->inputs.config->model_type(), "toy");
  ASSERT_EQ(r->inputs.safetensors.size(), 1u);
  EXPECT_EQ(r->inputs.safetensors[0].first, "model.safetensors");
  EXPECT_EQ(r->inputs.safetensors[0].second.data_bytes, 16u);  // 2 x 2 x 4 B
  EXPECT_EQ(r->inputs.safetensors[0].second.tensors[0].name, "w");
  // A trailing slash names the same directory.
  auto slash = Resolve(dir.string() + "/", "");
  ASSERT_TRUE(slash) << slash.error().message;
  EXPECT_EQ(slash->inputs.name, "my-model");
}

TEST(LocalSourceTest, ShardedCheckpointReadsEveryShardOrSaysWhatIsMissing) {
  const fs::path dir = fs::path(TempDir()) / "sharded";
  Write(dir / "config.json", kConfig);
  Write(dir / "model.safetensors.index.json",
        R"({"metadata": {"total_size": 32}, "weight_map": {
            "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}})");
  // No shard present: the config alone, said as an assumption.
  auto none = ReadModelDirectory(dir.string());
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->safetensors.empty());
  EXPECT_EQ(none->index_name, "model.safetensors.index.json");
  ASSERT_EQ(none->assumptions.size(), 1u);
  EXPECT_EQ(none->assumptions[0],
            "no shard files present: tensor sizes come from config.json, checked against the "
            "index's total_size");
  // One of two: an error naming the directory and the count.
  Write(dir / "model-00001-of-00002.safetensors", OneTensor("a"));
  auto one = ReadModelDirectory(dir.string());
  ASSERT_FALSE(one);
  EXPECT_EQ(one.error().message,
            dir.string() + ": 1 of 2 shards listed in model.safetensors.index.json are missing");
  // Both: read in the index's order.
  Write(dir / "model-00002-of-00002.safetensors", OneTensor("b"));
  auto both = ReadModelDirectory(dir.string());
  ASSERT_TRUE(both) << both.error().message;
  ASSERT_EQ(both->safetensors.size(), 2u);
  EXPECT_EQ(both->safetensors[0].first, "model-00001-of-00002.safetensors");
  EXPECT_EQ(both->safetensors[1].first, "model-00002-of-00002.safetensors");
  ASSERT_TRUE(both->index && both->index->total_size);
  EXPECT_EQ(*both->index->total_size, 32u);
}

TEST(LocalSourceTest, OtherSafetensorsNamesAreReadInNameOrder) {
  const fs::path dir = fs::path(TempDir()) / "exported";
  Write(dir / "b.safetensors", OneTensor("b"));
  Write(dir / "a.safetensors", OneTensor("a"));
  Write(dir / "notes.txt", "not a weight file");
  auto r = ReadModelDirectory(dir.string());
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->safetensors.size(), 2u);
  EXPECT_EQ(r->safetensors[0].first, "a.safetensors");
  EXPECT_EQ(r->safetensors[1].first, "b.safetensors");
  EXPECT_FALSE(r->config);
}

TEST(LocalSourceTest, UnusableDirectoriesGiveOneLineErrorsNamingThePath) {
  const fs::path empty = fs::path(TempDir()) / "empty";
  fs::create_directories(empty);
  auto r = Resolve(empty.string(), "");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            empty.string() + ": nothing usable: expected config.json, model.safetensors, "
                             "model.safetensors.index.json (+ shards) or pytorch_model.bin.index.json");

  const fs::path bad = fs::path(TempDir()) / "bad";
  Write(bad / "config.json", "[1, 2]");
  auto parsed = Resolve(bad.string(), "");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message, (bad / "config.json").string() + ": expected a JSON object, got array");

  // A metadata file over 64 MiB is refused before it is read (a sparse file: no disk used).
  const fs::path big = fs::path(TempDir()) / "big";
  Write(big / "config.json", "{}");
  fs::resize_file(big / "config.json", (uint64_t{64} << 20) + 1);
  auto large = Resolve(big.string(), "");
  ASSERT_FALSE(large);
  EXPECT_EQ(large.error().message, (big / "config.json").string() +
                                       ": file of 67108865 bytes is too large for a JSON metadata file");
}

TEST(LocalSourceTest, SingleFiles) {
  const fs::path dir = fs::path(TempDir()) / "files";
  Write(dir / "weights.safetensors", OneTensor("w"));
  Write(dir / "config.json", kConfig);
  // A .safetensors file, with the config.json beside it.
  auto st = Resolve((dir / "weights.safetensors").string(), "");
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_EQ(st->kind, InputKind::kFile);
  EXPECT_EQ(st->inputs.name, "weights.safetensors");
  ASSERT_EQ(st->inputs.safetensors.size(), 1u);
  ASSERT_TRUE(st->inputs.config);
  EXPECT_EQ(st->inputs.config->model_type(), "toy");
  // A config.json alone: the model is named after its folder.
  auto config = Resolve((dir / "config.json").string(), "");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->kind, InputKind::kFile);
  EXPECT_EQ(config->inputs.name, "files");
  EXPECT_TRUE(config->inputs.safetensors.empty());
  // Another .json file is named after itself, not after its folder.
  Write(dir / "llama-8b.json", kConfig);
  auto other = Resolve((dir / "llama-8b.json").string(), "");
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_EQ(other->inputs.name, "llama-8b.json");
  // Anything else is refused with what is accepted.
  Write(dir / "pytorch_model.bin", "pickle");
  auto bin = Resolve((dir / "pytorch_model.bin").string(), "");
  ASSERT_FALSE(bin);
  EXPECT_EQ(bin.error().message,
            (dir / "pytorch_model.bin").string() +
                ": unsupported file type (expected a .safetensors or .gguf file, a config.json, "
                "or a model directory)");
  // A split GGUF names the first missing part (checked before any header is read).
  Write(dir / "m-00001-of-00002.gguf", "GGUF");
  auto split = Resolve((dir / "m-00001-of-00002.gguf").string(), "");
  ASSERT_FALSE(split);
  EXPECT_EQ(split.error().message,
            (dir / "m-00002-of-00002.gguf").string() + ": split file 2 of 2 is missing");
}

// $CACHE/models--org--name/refs/<revision> holds a commit; snapshots/<commit>/ the files.
struct Cache {
  fs::path root = fs::path(TempDir()) / "hub";
  fs::path repo = root / "models--org--name";
  fs::path Snapshot(const std::string& sha) {
    const fs::path dir = repo / "snapshots" / sha;
    Write(dir / "config.json", kConfig);
    Write(dir / "model.safetensors", OneTensor("w"));
    return dir;
  }
};

TEST(LocalSourceTest, HfCacheFollowsTheRefToItsSnapshot) {
  Cache cache;
  const fs::path snapshot = cache.Snapshot(kSha);
  Write(cache.repo / "refs" / "main", kSha + "\n");  // huggingface_hub's file; the newline is trimmed
  auto r = Resolve("org/name", cache.root.string());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kind, InputKind::kHfCache);
  EXPECT_EQ(r->inputs.name, "org/name");
  EXPECT_EQ(r->inputs.location, snapshot.string());
  ASSERT_EQ(r->inputs.safetensors.size(), 1u);
  EXPECT_EQ(r->inputs.assumptions,
            std::vector<std::string>{"Hub revision main is commit " + kSha});
  // A commit given as the revision needs no ref.
  auto by_sha = Resolve("org/name", cache.root.string(), kSha);
  ASSERT_TRUE(by_sha) << by_sha.error().message;
  EXPECT_EQ(by_sha->kind, InputKind::kHfCache);
  EXPECT_EQ(by_sha->inputs.assumptions,
            std::vector<std::string>{"Hub revision " + kSha + " is commit " + kSha});
}

TEST(LocalSourceTest, HfCacheMissesAreNotFoundSoTheHubCanBeTried) {
  Cache cache;
  // A ref naming a snapshot that is not there (a download cut short).
  Write(cache.repo / "refs" / "main", kSha);
  auto absent = Resolve("org/name", cache.root.string());
  ASSERT_TRUE(absent) << absent.error().message;
  EXPECT_EQ(absent->kind, InputKind::kNotFound);
  // A ref that is not a commit is never joined under snapshots/ (it could climb out).
  Write(cache.repo / "refs" / "v1", "../../../../etc");
  auto not_sha = Resolve("org/name", cache.root.string(), "v1");
  ASSERT_TRUE(not_sha) << not_sha.error().message;
  EXPECT_EQ(not_sha->kind, InputKind::kNotFound);
  // No such revision, no such repository, no cache configured.
  EXPECT_EQ(Resolve("org/name", cache.root.string(), "v2")->kind, InputKind::kNotFound);
  EXPECT_EQ(Resolve("org/other", cache.root.string())->kind, InputKind::kNotFound);
  cache.Snapshot(kSha);
  EXPECT_EQ(Resolve("org/name", cache.root.string())->kind, InputKind::kHfCache);
  EXPECT_EQ(Resolve("org/name", "")->kind, InputKind::kNotFound);
}

TEST(LocalSourceTest, ARevisionThatLeavesTheCacheIsNotFollowed) {
  Cache cache;
  cache.Snapshot(kSha);
  // refs/../../escape is $CACHE/escape: a file outside the repository holding a valid commit.
  // The revision is refused before it is joined under refs/.
  Write(cache.root / "escape", kSha);
  Write(cache.repo / "refs" / "other", "not a commit");
  ASSERT_TRUE(fs::is_regular_file(cache.repo / "refs" / ".." / ".." / "escape"));  // reachable
  for (const std::string revision : {"../../escape", "/abs", "a//b", "a\\b", ""}) {
    auto r = Resolve("org/name", cache.root.string(), revision);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->kind, InputKind::kNotFound) << revision;
  }
}

TEST(LocalSourceTest, AnUnusableSnapshotIsAnError) {
  Cache cache;
  fs::create_directories(cache.repo / "snapshots" / kSha);  // an empty snapshot
  Write(cache.repo / "refs" / "main", kSha);
  auto r = Resolve("org/name", cache.root.string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, (cache.repo / "snapshots" / kSha).string() +
                                   ": nothing usable: expected config.json, model.safetensors, "
                                   "model.safetensors.index.json (+ shards) or "
                                   "pytorch_model.bin.index.json");
}

TEST(LocalSourceTest, TheCatalogAnswersWhatTheCacheLacks) {
  // gpt2 is in the built-in catalog; its cache entry names a missing snapshot.
  Cache cache;
  Write(cache.root / "models--openai-community--gpt2" / "refs" / "main", kSha);
  auto r = Resolve("openai-community/gpt2", cache.root.string(), "main", /*catalog=*/true);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->kind, InputKind::kCatalog);
  EXPECT_EQ(r->inputs.name, "openai-community/gpt2");
  EXPECT_EQ(r->inputs.location, "catalog");
  ASSERT_TRUE(r->inputs.config);
  EXPECT_EQ(r->inputs.config->model_type(), "gpt2");
  EXPECT_EQ(r->inputs.assumptions,
            std::vector<std::string>{
                "from memfit's built-in catalog (published hyperparameters; no network used)"});
  // The short name too; without the catalog, nothing.
  EXPECT_EQ(Resolve("gpt2", "", "main", true)->inputs.name, "openai-community/gpt2");
  EXPECT_EQ(Resolve("openai-community/gpt2", "", "main", false)->kind, InputKind::kNotFound);
  EXPECT_EQ(Resolve("no-such-org/no-such-model", "", "main", true)->kind, InputKind::kNotFound);
  // Not a path and not a Hub id: not found, without looking anywhere.
  EXPECT_EQ(Resolve("two words", "", "main", true)->kind, InputKind::kNotFound);
}

TEST(LocalSourceTest, SafeRepoPathsAndHubIds) {
  for (const char* ok : {"main", "v1.0", "refs/pr/1", "a/b/c.safetensors"}) {
    EXPECT_TRUE(IsSafeRepoPath(ok)) << ok;
  }
  for (const char* bad : {"", "/etc/passwd", "..", "a/../b", "./a", "a//b", "a/", "a\\b"}) {
    EXPECT_FALSE(IsSafeRepoPath(bad)) << bad;
  }
  EXPECT_FALSE(IsSafeRepoPath(std::string(1025, 'a')));
  EXPECT_TRUE(IsSafeRepoPath(std::string(1024, 'a')));
  EXPECT_FALSE(IsSafeRepoPath(std::string("a\0b", 3)));

  for (const char* ok : {"gpt2", "org/name", "Org_1/name-2.5"}) EXPECT_TRUE(LooksLikeHubId(ok)) << ok;
  for (const char* bad : {"", "a/b/c", "/name", "org/", ".hidden", "org/..", "a b", "org/na~me"}) {
    EXPECT_FALSE(LooksLikeHubId(bad)) << bad;
  }
  EXPECT_FALSE(LooksLikeHubId(std::string(201, 'a')));
}

TEST(LocalSourceTest, DefaultHfHubCacheFollowsHuggingfaceHubsOrder) {
  ScopedEnv env;
  env.Set("HF_HUB_CACHE", nullptr);
  env.Set("HUGGINGFACE_HUB_CACHE", nullptr);
  env.Set("HF_HOME", nullptr);
  env.Set("XDG_CACHE_HOME", nullptr);
  env.Set("HOME", "/home/u");
  EXPECT_EQ(DefaultHfHubCache(), "/home/u/.cache/huggingface/hub");
  env.Set("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(DefaultHfHubCache(), "/xdg/huggingface/hub");
  env.Set("HF_HOME", "/hf");
  EXPECT_EQ(DefaultHfHubCache(), "/hf/hub");
  env.Set("HUGGINGFACE_HUB_CACHE", "/legacy");
  EXPECT_EQ(DefaultHfHubCache(), "/legacy");
  env.Set("HF_HUB_CACHE", "/direct");
  EXPECT_EQ(DefaultHfHubCache(), "/direct");
  env.Set("HF_HUB_CACHE", "");  // empty counts as unset
  EXPECT_EQ(DefaultHfHubCache(), "/legacy");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
