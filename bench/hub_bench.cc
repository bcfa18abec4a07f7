// The Hub client against the fake Hub with 50 ms of latency per request (each server, so an LFS
// read through the CDN redirect costs 100 ms): every weight header of a synthetic DeepSeek-V3-like
// model (163 shards, ~91k tensors, FP8 weights with F32 block scales), cold and cached.
// Targets (issue 4): cold < 1.5 s, cached < 50 ms.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fake_hub.h"
#include "memfit/hub.h"

namespace {
namespace fs = std::filesystem;
using memfit::testing::FakeHub;

constexpr int kShards = 163;
constexpr int kLayers = 61;
constexpr int kExperts = 256;

std::string SafetensorsHeaderOnly(const nlohmann::ordered_json& header) {
  std::string json = header.dump();
  while ((8 + json.size()) % 8 != 0) json += ' ';
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return out + json;
}

struct Tensor {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t bytes;
};

// DeepSeek-V3's shapes: hidden 7168, MoE intermediate 2048, 256 routed experts; FP8 weights with
// one F32 scale per 128x128 block ("weight_scale_inv").
std::vector<Tensor> DeepSeekLikeTensors() {
  std::vector<Tensor> t;
  auto fp8 = [&t](const std::string& name, uint64_t rows, uint64_t cols) {
    t.push_back({name + ".weight", "F8_E4M3", {rows, cols}, rows * cols});
    uint64_t r = (rows + 127) / 128, c = (cols + 127) / 128;
    t.push_back({name + ".weight_scale_inv", "F32", {r, c}, r * c * 4});
  };
  t.push_back({"model.embed_tokens.weight", "BF16", {129280, 7168}, 129280ull * 7168 * 2});
  for (int l = 0; l < kLayers; ++l) {
    std::string p = fmt::format("model.layers.{}.", l);
    fp8(p + "self_attn.q_a_proj", 1536, 7168);
    fp8(p + "self_attn.q_b_proj", 24576, 1536);
    fp8(p + "self_attn.kv_a_proj_with_mqa", 576, 7168);
    fp8(p + "self_attn.kv_b_proj", 32768, 512);
    fp8(p + "self_attn.o_proj", 7168, 16384);
    t.push_back({p + "input_layernorm.weight", "BF16", {7168}, 7168 * 2});
    t.push_back({p + "post_attention_layernorm.weight", "BF16", {7168}, 7168 * 2});
    if (l < 3) {
      for (const char* m : {"gate_proj", "up_proj"}) fp8(p + "mlp." + m, 18432, 7168);
      fp8(p + "mlp.down_proj", 7168, 18432);
      continue;
    }
    // Routed experts (the shared expert is left out): 58 x 256 x 3 x 2 = 89,088 tensors.
    for (int e = 0; e < kExperts; ++e) {
      std::string q = fmt::format("{}mlp.experts.{}.", p, e);
      fp8(q + "gate_proj", 2048, 7168);
      fp8(q + "up_proj", 2048, 7168);
      fp8(q + "down_proj", 7168, 2048);
    }
    t.push_back({p + "mlp.gate.weight", "BF16", {256, 7168}, 256ull * 7168 * 2});
  }
  t.push_back({"model.norm.weight", "BF16", {7168}, 7168 * 2});
  t.push_back({"lm_head.weight", "BF16", {129280, 7168}, 129280ull * 7168 * 2});
  return t;
}

memfit::testing::FakeRepo BuildRepo(size_t& tensor_count) {
  memfit::testing::FakeRepo repo;
  repo.id = "deepseek-ai/DeepSeek-V3-synthetic";
  repo.commit = memfit::testing::FakeSha1("deepseek-bench");
  std::vector<Tensor> tensors = DeepSeekLikeTensors();
  tensor_count = tensors.size();
  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  size_t per_shard = (tensors.size() + kShards - 1) / kShards;
  for (int s = 0; s < kShards; ++s) {
    std::string name = fmt::format("model-{:05d}-of-{:06d}.safetensors", s + 1, kShards);
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    header["__metadata__"] = {{"format", "pt"}};
    uint64_t offset = 0;
    for (size_t i = s * per_shard; i < std::min(tensors.size(), (s + 1) * per_shard); ++i) {
      const Tensor& t = tensors[i];
      header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes}}};
      offset += t.bytes;
      weight_map[t.name] = name;
    }
    repo.files[name] = SafetensorsHeaderOnly(header);
    repo.logical_sizes[name] = repo.files[name].size() + offset;
  }
  repo.files["model.safetensors.index.json"] =
      nlohmann::ordered_json({{"metadata", {{"total_size", 0}}}, {"weight_map", weight_map}}).dump();
  repo.files["config.json"] = R"({"model_type": "deepseek_v3", "hidden_size": 7168})";
  return repo;
}

struct Fixture {
  FakeHub hub;
  size_t tensors = 0;
  Fixture() {
    hub.AddRepo(BuildRepo(tensors));
    hub.latency_ms = 50;
  }
};

Fixture& Shared() {
  static Fixture* fixture = new Fixture();
  return *fixture;
}

std::string FreshDir() {
  static int n = 0;
  fs::path dir = fs::temp_directory_path() / fmt::format("memfit_hub_bench_{}_{}", ::getpid(), n++);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

memfit::HubSettings Settings(Fixture& f) {
  memfit::HubSettings s;
  s.endpoint = f.hub.endpoint();
  s.hub_cache = FreshDir();
  s.memfit_cache = FreshDir();
  return s;
}

void Check(benchmark::State& state, const memfit::Result<memfit::HubResolution>& r, size_t tensors) {
  if (!r) {
    state.SkipWithError(r.error().message.c_str());
    return;
  }
  size_t n = 0;
  for (const auto& [file, header] : r->inputs.safetensors) n += header.tensors.size();
  if (n != tensors || r->inputs.safetensors.size() != kShards) state.SkipWithError("wrong tensor count");
}

void BM_HubColdAllHeaders(benchmark::State& state) {
  Fixture& f = Shared();
  memfit::HubStats stats;
  for (auto _ : state) {
    state.PauseTiming();
    memfit::HubSettings s = Settings(f);
    stats.requests = 0;
    stats.bytes = 0;
    f.hub.ClearLog();
    state.ResumeTiming();
    auto ref = memfit::ParseHubRef("deepseek-ai/DeepSeek-V3-synthetic", s.endpoint);
    auto r = memfit::ResolveHubModel(*ref, {}, s, stats);
    Check(state, r, f.tensors);
  }
  // MEMFIT_HUB_BENCH_TRACE=1: when each request of the last run reached the fake Hub.
  if (std::getenv("MEMFIT_HUB_BENCH_TRACE")) {
    for (const auto& line : f.hub.timeline()) fmt::print(stderr, "{}\n", line);
  }
  state.counters["requests"] = static_cast<double>(stats.requests.load());
  state.counters["MiB"] = static_cast<double>(stats.bytes.load()) / (1 << 20);
  state.counters["tensors"] = static_cast<double>(f.tensors);
}
BENCHMARK(BM_HubColdAllHeaders)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_HubCachedRun(benchmark::State& state) {
  Fixture& f = Shared();
  memfit::HubSettings s = Settings(f);
  memfit::HubStats warm;
  auto ref = memfit::ParseHubRef("deepseek-ai/DeepSeek-V3-synthetic", s.endpoint);
  auto first = memfit::ResolveHubModel(*ref, {}, s, warm);
  if (!first) {
    state.SkipWithError(first.error().message.c_str());
    return;
  }
  memfit::HubStats stats;
  for (auto _ : state) {
    auto r = memfit::ResolveHubModel(*ref, {}, s, stats);
    Check(state, r, f.tensors);
    if (r && !r->from_cache) state.SkipWithError("not from cache");
  }
  state.counters["requests"] = static_cast<double>(stats.requests.load());
}
BENCHMARK(BM_HubCachedRun)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);

}  // namespace

BENCHMARK_MAIN();
