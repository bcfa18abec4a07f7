// A full `fit` (placement, GPU count, speed bounds, advice) for every catalog model on every
// catalog GPU. Target: the whole grid in under one second.

#include <benchmark/benchmark.h>

#include <vector>

#include "memfit/architecture.h"
#include "memfit/catalog.h"
#include "memfit/fit.h"
#include "memfit/gpu.h"
#include "memfit/hf_config.h"

namespace {

std::vector<memfit::Model> CatalogModels() {
  std::vector<memfit::Model> models;
  for (const auto& e : memfit::Catalog()) {
    auto config = memfit::HfConfig::Parse(e.config_json, std::string(e.id));
    if (!config) continue;
    auto model = memfit::BuildFromConfig(*config);
    if (!model) continue;
    model->name = std::string(e.id);
    models.push_back(std::move(*model));
  }
  return models;
}

void BM_FitGrid(benchmark::State& state) {
  const auto models = CatalogModels();
  const auto gpus = memfit::GpuCatalog();
  for (auto _ : state) {
    size_t fits = 0;
    for (const auto& model : models) {
      for (const auto& gpu : gpus) {
        memfit::FitRequest request;
        request.gpus.push_back(memfit::DeviceSpec{.label = std::string(gpu.name),
                                                  .memory_bytes = memfit::MemoryBytes(gpu),
                                                  .gpu = &gpu});
        request.ram_bytes = uint64_t{64} << 30;
        auto plan = memfit::PlanFit(model, request);
        if (plan && plan->verdict == memfit::Verdict::kFits) ++fits;
      }
    }
    benchmark::DoNotOptimize(fits);
  }
  state.counters["models"] = static_cast<double>(models.size());
  state.counters["gpus"] = static_cast<double>(gpus.size());
  state.counters["plans"] = static_cast<double>(models.size() * gpus.size());
}
BENCHMARK(BM_FitGrid)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
