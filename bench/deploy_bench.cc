// Deployment planning on the largest configs of ../shared/eval (DeepSeek-V3, Qwen3-Coder-480B,
// Qwen3-235B-FP8, gpt-oss-120b, Llama-3.1-405B): `fit --engine vllm --search` over 1..64 GPUs of
// one kind (target: under 100 ms per model) and `fit --all-gpus` (every catalog GPU at 1/2/4/8;
// target: under 200 ms per model). The model is built once outside the timing (resolution is not
// what is measured); the planner is made inside it, so the weights are prepared on every run.
// Also the largest configs of ../shared/eval/recent: Kimi-K3 (2.77T, 249,335 tensors),
// DeepSeek-V4-Pro FP8 and Kimi-K2.5 NVFP4.

#include <benchmark/benchmark.h>

#include <optional>
#include <vector>

#include "eval_config.h"
#include "memfit/architecture.h"
#include "memfit/deploy.h"
#include "memfit/gpu.h"
#include "memfit/hf_config.h"

namespace {

std::optional<memfit::Model> EvalModel(const std::string& sub) {
  auto text = memfit::bench::EvalConfigText(sub);
  if (!text) return std::nullopt;
  auto config = memfit::HfConfig::Parse(*text, sub);
  if (!config) return std::nullopt;
  auto model = memfit::BuildFromConfig(*config);
  if (!model) return std::nullopt;
  model->name = sub;
  return std::move(*model);
}

const char* const kModels[] = {
    "models/deepseek-ai__DeepSeek-V3", "recent/Qwen__Qwen3-Coder-480B-A35B-Instruct",
    "recent/Qwen__Qwen3-235B-A22B-FP8", "recent/openai__gpt-oss-120b",
    "recent/meta-llama__Meta-Llama-3.1-405B", "recent/moonshotai__Kimi-K3",
    "recent/sgl-project__DeepSeek-V4-Pro-FP8", "recent/nvidia__Kimi-K2.5-NVFP4"};

memfit::InferenceOptions Vllm() {
  memfit::InferenceOptions o;
  o.engine = memfit::Engine::kVllm;
  o.context_tokens = 131072;
  o.batch = 8;
  return o;
}

void BM_DeploySearch64(benchmark::State& state) {
  auto model = EvalModel(kModels[state.range(0)]);
  if (!model) {
    state.SkipWithError("../shared/eval config absent or not buildable from config.json");
    return;
  }
  auto gpu = memfit::FindGpu("h200");
  memfit::DeployGpu g{.name = "H200 SXM", .memory_bytes = memfit::MemoryBytes(**gpu), .spec = *gpu};
  memfit::DeployRequest request{.inference = Vllm(), .max_gpus = 64};
  size_t rows = 0;
  for (auto _ : state) {
    memfit::DeployPlanner planner(*model, Vllm());
    rows = planner.Search(g, request).size();
    benchmark::DoNotOptimize(rows);
  }
  state.SetLabel(model->name);
}
BENCHMARK(BM_DeploySearch64)->DenseRange(0, 7)->Unit(benchmark::kMillisecond);

void BM_DeployAllGpus(benchmark::State& state) {
  auto model = EvalModel(kModels[state.range(0)]);
  if (!model) {
    state.SkipWithError("../shared/eval config absent or not buildable from config.json");
    return;
  }
  const uint64_t counts[] = {1, 2, 4, 8};
  for (auto _ : state) {
    memfit::DeployPlanner planner(*model, Vllm());
    auto rows = planner.Grid(counts);
    benchmark::DoNotOptimize(rows.data());
  }
  state.SetLabel(model->name);
}
BENCHMARK(BM_DeployAllGpus)->DenseRange(0, 7)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

// The planner's fixed cost: the weights prepared once (stored format, roles, splits, bytes).
void BM_PrepareWeights(benchmark::State& state) {
  auto model = EvalModel(kModels[state.range(0)]);
  if (!model) {
    state.SkipWithError("../shared/eval config absent or not buildable from config.json");
    return;
  }
  for (auto _ : state) {
    auto w = memfit::PrepareInferenceWeights(*model, Vllm());
    benchmark::DoNotOptimize(w);
  }
  state.SetLabel(model->name + " (" + std::to_string(model->tensors.size()) + " tensors)");
}
BENCHMARK(BM_PrepareWeights)->DenseRange(5, 7)->Unit(benchmark::kMillisecond);
