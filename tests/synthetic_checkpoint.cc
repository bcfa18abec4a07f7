#include "synthetic_checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace memfit::testing {
namespace {

struct Spec {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t bytes() const {
    uint64_t n = 1;
    for (auto d : shape) n *= d;
    return dtype == "BF16" ? n * 2 : dtype == "F32" ? n * 4 : n;
  }
};

// A weight and its fp8 128x128 block scale, as DeepSeek-V3 stores them.
void Fp8Linear(std::vector<Spec>& out, const std::string& prefix, uint64_t rows, uint64_t cols) {
  out.push_back({prefix + ".weight", "F8_E4M3", {rows, cols}});
  out.push_back({prefix + ".weight_scale_inv", "F32", {(rows + 127) / 128, (cols + 127) / 128}});
}

}  // namespace

size_t WriteSyntheticDeepSeekCheckpoint(const std::string& dir, const SyntheticShape& s) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::vector<Spec> tensors;
  const uint64_t h = s.hidden;
  tensors.push_back({"model.embed_tokens.weight", "BF16", {uint64_t(s.vocab), h}});
  for (int l = 0; l < s.layers; ++l) {
    std::string p = fmt::format("model.layers.{}", l);
    tensors.push_back({p + ".input_layernorm.weight", "BF16", {h}});
    tensors.push_back({p + ".post_attention_layernorm.weight", "BF16", {h}});
    Fp8Linear(tensors, p + ".self_attn.q_a_proj", 1536, h);
    tensors.push_back({p + ".self_attn.q_a_layernorm.weight", "BF16", {1536}});
    Fp8Linear(tensors, p + ".self_attn.q_b_proj", 128 * 192, 1536);
    Fp8Linear(tensors, p + ".self_attn.kv_a_proj_with_mqa", 576, h);
    tensors.push_back({p + ".self_attn.kv_a_layernorm.weight", "BF16", {512}});
    Fp8Linear(tensors, p + ".self_attn.kv_b_proj", 128 * 256, 512);
    Fp8Linear(tensors, p + ".self_attn.o_proj", h, 128 * 128);
    if (l < s.dense_layers) {
      Fp8Linear(tensors, p + ".mlp.gate_proj", s.dense_intermediate, h);
      Fp8Linear(tensors, p + ".mlp.up_proj", s.dense_intermediate, h);
      Fp8Linear(tensors, p + ".mlp.down_proj", h, s.dense_intermediate);
      continue;
    }
    tensors.push_back({p + ".mlp.gate.weight", "BF16", {uint64_t(s.experts), h}});
    tensors.push_back({p + ".mlp.gate.e_score_correction_bias", "F32", {uint64_t(s.experts)}});
    for (int e = 0; e < s.experts; ++e) {
      std::string x = fmt::format("{}.mlp.experts.{}", p, e);
      Fp8Linear(tensors, x + ".gate_proj", s.moe_intermediate, h);
      Fp8Linear(tensors, x + ".up_proj", s.moe_intermediate, h);
      Fp8Linear(tensors, x + ".down_proj", h, s.moe_intermediate);
    }
    Fp8Linear(tensors, p + ".mlp.shared_experts.gate_proj", s.moe_intermediate, h);
    Fp8Linear(tensors, p + ".mlp.shared_experts.up_proj", s.moe_intermediate, h);
    Fp8Linear(tensors, p + ".mlp.shared_experts.down_proj", h, s.moe_intermediate);
  }
  tensors.push_back({"model.norm.weight", "BF16", {h}});
  tensors.push_back({"lm_head.weight", "BF16", {uint64_t(s.vocab), h}});

  // Built as text: ordered_json's linear key lookup would make this quadratic.
  std::string weight_map = "{";
  uint64_t total = 0;
  const size_t per_shard = (tensors.size() + s.shards - 1) / s.shards;
  for (int shard = 0; shard < s.shards; ++shard) {
    std::string file = fmt::format("model-{:05d}-of-{:05d}.safetensors", shard + 1, s.shards);
    std::string json = R"({"__metadata__":{"format":"pt"})";
    uint64_t offset = 0;
    for (size_t i = shard * per_shard; i < std::min(tensors.size(), (shard + 1) * per_shard); ++i) {
      const auto& t = tensors[i];
      json += fmt::format(R"(,"{}":{{"dtype":"{}","shape":{},"data_offsets":[{},{}]}})", t.name,
                          t.dtype, nlohmann::json(t.shape).dump(), offset, offset + t.bytes());
      offset += t.bytes();
      weight_map += fmt::format(R"({}"{}":"{}")", weight_map.size() > 1 ? "," : "", t.name, file);
    }
    json += "}";
    total += offset;
    while ((8 + json.size()) % 8) json += ' ';
    std::string prefix(8, '\0');
    for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((uint64_t(json.size()) >> (8 * i)) & 0xff);
    std::string path = (fs::path(dir) / file).string();
    {
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f << prefix << json;
    }
    // The data region is a hole: the file has its full size without using disk.
    if (::truncate(path.c_str(), static_cast<off_t>(8 + json.size() + offset)) != 0) {
      throw std::runtime_error("cannot size " + path);
    }
  }
  std::ofstream(fs::path(dir) / "model.safetensors.index.json")
      << fmt::format(R"({{"metadata":{{"total_size":{}}},"weight_map":{}}}}})", total, weight_map);
  return tensors.size();
}

}  // namespace memfit::testing
