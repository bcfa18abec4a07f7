#pragma once
// Fixture repositories for the Hub tests, built in code: a tiny llama with config.json, an index
// and two shards (hidden 64, 2 layers, vocab 128, F32/BF16 mixed so the dtype split is visible).

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>
#include <string>

#include <fmt/format.h>

#include "fake_hub.h"
#include "memfit/hub.h"
#include "test_support.h"

namespace memfit::testing {

inline std::string TinyLlamaConfig() {
  return R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
             "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
             "num_key_value_heads": 2, "vocab_size": 128, "max_position_embeddings": 256,
             "torch_dtype": "bfloat16", "tie_word_embeddings": false})";
}

// Files of the tiny llama, sharded in two: layer 0 + embeddings in shard 1, the rest in shard 2.
inline std::map<std::string, std::string> TinyLlamaFiles() {
  auto layer = [](int i) {
    std::string p = fmt::format("model.layers.{}.", i);
    return std::vector<FakeTensor>{
        {p + "self_attn.q_proj.weight", "BF16", {64, 64}},
        {p + "self_attn.k_proj.weight", "BF16", {32, 64}},
        {p + "self_attn.v_proj.weight", "BF16", {32, 64}},
        {p + "self_attn.o_proj.weight", "BF16", {64, 64}},
        {p + "mlp.gate_proj.weight", "BF16", {128, 64}},
        {p + "mlp.up_proj.weight", "BF16", {128, 64}},
        {p + "mlp.down_proj.weight", "BF16", {64, 128}},
        {p + "input_layernorm.weight", "F32", {64}},
        {p + "post_attention_layernorm.weight", "F32", {64}},
    };
  };
  std::vector<FakeTensor> one = layer(0);
  one.insert(one.begin(), FakeTensor{"model.embed_tokens.weight", "BF16", {128, 64}});
  std::vector<FakeTensor> two = layer(1);
  two.push_back({"model.norm.weight", "F32", {64}});
  two.push_back({"lm_head.weight", "BF16", {128, 64}});
  std::map<std::string, std::string> files;
  files["config.json"] = TinyLlamaConfig();
  files["model-00001-of-00002.safetensors"] = MakeSafetensors(one, {{"format", "pt"}});
  files["model-00002-of-00002.safetensors"] = MakeSafetensors(two, {{"format", "pt"}});
  std::string map;
  for (const auto& [shard, tensors] : {std::pair{"model-00001-of-00002.safetensors", &one},
                                       std::pair{"model-00002-of-00002.safetensors", &two}}) {
    for (const auto& t : *tensors) map += fmt::format("{}\"{}\": \"{}\"", map.empty() ? "" : ", ", t.name, shard);
  }
  // total_size: shard 1 = embed 128*64*2 (16384) + layer 74240 = 90624; a layer = q 8192 + k 4096 +
  // v 4096 + o 8192 + gate/up/down 3*16384 + 2 norms 2*256 = 74240; shard 2 = 74240 + norm 256 +
  // lm_head 16384 = 90880; total 181504.
  files["model.safetensors.index.json"] = "{\"metadata\": {\"total_size\": 181504}, \"weight_map\": {" + map + "}}";
  files["README.md"] = "# tiny llama\n";
  return files;
}

// One file of a Hugging Face cache snapshot in huggingface_hub's layout, as `snapshot_download` or
// `huggingface-cli download REPO FILE` leaves it: refs/main names `commit`, blobs/{etag} holds the
// bytes (extended to `size` with a sparse tail when larger, e.g. a GGUF file's tensor data), and
// snapshots/{commit}/{path} links to ../../blobs/{etag} (one more ".." per folder in `path`).
inline void WriteHfCacheFile(const std::string& hub_cache, const std::string& repo_id,
                             const std::string& commit, const std::string& path,
                             const std::string& bytes, const std::string& etag,
                             uint64_t size = 0) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(hub_cache) / ("models--" + repo_id.substr(0, repo_id.find('/')) +
                                               "--" + repo_id.substr(repo_id.find('/') + 1));
  WriteFiles(root.string(), {{"refs/main", commit}, {"blobs/" + etag, bytes}});
  if (size > bytes.size()) fs::resize_file(root / "blobs" / etag, size);
  const fs::path link = root / "snapshots" / commit / path;
  fs::create_directories(link.parent_path());
  fs::path target = "../../blobs/" + etag;
  for (char c : path) {
    if (c == '/') target = ".." / target;
  }
  fs::create_symlink(target, link);
}

// Every file under `dir` (following no links) and its path, for token leak checks.
inline std::string AllBytesUnder(const std::string& dir) {
  std::string all;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) all += ReadFile(e.path().string()).value_or("") + "\n" + e.path().string();
  }
  return all;
}

// Settings for a test: the fake's endpoint, fresh empty caches, fast retries, short timeouts.
inline HubSettings TestSettings(const FakeHub& hub) {
  HubSettings s;
  s.endpoint = hub.endpoint();
  s.hub_cache = TempDir();
  s.memfit_cache = TempDir();
  s.retry_base_ms = 1;
  s.retry_max_ms = 5;
  s.max_attempts = 3;
  s.metadata_timeout_ms = 5'000;
  s.download_timeout_ms = 5'000;
  return s;
}

// Sets environment variables for one test and restores them.
class ScopedEnv {
 public:
  ScopedEnv() = default;
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  void Set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

inline const std::string kCommit = FakeSha1("tiny-llama-commit");

inline FakeRepo TinyLlamaRepo(std::string id = "org/tiny-llama") {
  FakeRepo repo;
  repo.id = std::move(id);
  repo.commit = kCommit;
  repo.refs["v1.0"] = kCommit;
  repo.refs["refs/pr/1"] = kCommit;
  repo.files = TinyLlamaFiles();
  return repo;
}

}  // namespace memfit::testing
