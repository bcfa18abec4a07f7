// Config-only description of the largest configs in ../shared/eval/recent (issue 15's target:
// under 50 ms each): config.json parsed, the model built, and the load table (EstimateLoad:
// totals, dtypes, largest block). The second argument: 1 = the compact form `memfit
// estimate-memory` builds (a layer's experts once, with a count), 0 = every tensor of every
// expert (what inspect, inference, train and fit build). Skipped where the folder is absent.

#include <benchmark/benchmark.h>

#include <string>

#include "eval_config.h"
#include "memfit/architecture.h"
#include "memfit/estimate_load.h"
#include "memfit/hf_config.h"

namespace {

const char* const kConfigs[] = {
    "recent/nvidia__DeepSeek-V4-Pro-NVFP4", "recent/sgl-project__DeepSeek-V4-Pro-FP8",
    "recent/moonshotai__Kimi-K3", "recent/Qwen__Qwen3.5-397B-A17B",
    "recent/nvidia__Qwen3.5-397B-A17B-NVFP4", "recent/moonshotai__Kimi-K2.5"};

void BM_ConfigOnlyDescribe(benchmark::State& state) {
  const std::string sub = kConfigs[state.range(0)];
  auto text = memfit::bench::EvalConfigText(sub);
  if (!text) {
    state.SkipWithError("../shared/eval config absent");
    return;
  }
  const bool compact = state.range(1) != 0;
  size_t tensors = 0;
  uint64_t expanded = 0;
  for (auto _ : state) {
    auto config = memfit::HfConfig::Parse(*text, sub);
    if (!config) {
      state.SkipWithError(config.error().message.c_str());
      return;
    }
    auto model = memfit::BuildFromConfig(*config, {.compact_repeats = compact});
    if (!model) {
      state.SkipWithError(model.error().message.c_str());
      return;
    }
    auto load = memfit::EstimateLoad(*model, {});
    benchmark::DoNotOptimize(load);
    tensors = model->tensors.size();
    expanded = memfit::ExpandedTensorCount(*model);
  }
  state.SetLabel(sub.substr(sub.find('/') + 1) + (compact ? ", compact: " : ", expanded: ") +
                 std::to_string(tensors) + " of " + std::to_string(expanded) + " tensors");
}
BENCHMARK(BM_ConfigOnlyDescribe)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {1, 0}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
