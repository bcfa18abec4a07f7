// Reads every shard header of a synthetic DeepSeek-V3-shaped checkpoint (163 shards, ~91k
// tensors) from local disk, as `memfit estimate-memory DIR` does. Target: < 100 ms on one core.
//   ./build/safetensors_bench

#include <benchmark/benchmark.h>

#include <filesystem>

#include "memfit/describe.h"
#include "memfit/estimate_load.h"
#include "memfit/local_source.h"
#include "synthetic_checkpoint.h"

namespace {

const std::string& CheckpointDir() {
  static const std::string dir = [] {
    auto path = std::filesystem::temp_directory_path() / "memfit_bench_deepseek_v3";
    std::filesystem::remove_all(path);
    size_t n = memfit::testing::WriteSyntheticDeepSeekCheckpoint(path.string());
    std::fprintf(stderr, "synthetic checkpoint: %zu tensors in 163 shards at %s\n", n, path.c_str());
    return path.string();
  }();
  return dir;
}

void BM_ReadShardHeaders(benchmark::State& state) {
  const auto& dir = CheckpointDir();
  for (auto _ : state) {
    auto inputs = memfit::ReadModelDirectory(dir);
    if (!inputs) state.SkipWithError(inputs.error().message.c_str());
    benchmark::DoNotOptimize(inputs);
  }
}
BENCHMARK(BM_ReadShardHeaders)->Unit(benchmark::kMillisecond);

void BM_HeadersToLoadEstimate(benchmark::State& state) {
  const auto& dir = CheckpointDir();
  for (auto _ : state) {
    auto inputs = memfit::ReadModelDirectory(dir);
    auto model = memfit::DescribeModel(*inputs);
    if (!model) state.SkipWithError(model.error().message.c_str());
    auto estimate = memfit::EstimateLoad(*model);
    benchmark::DoNotOptimize(estimate);
  }
}
BENCHMARK(BM_HeadersToLoadEstimate)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
