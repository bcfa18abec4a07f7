// A full `fit` (placement, GPU count, speed bounds, advice) for every catalog model on every
// catalog GPU. Target: the whole grid in under one second.

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
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

// Every shared/eval config a memfit builder supports (a larger, MoE-heavy grid than the catalog
// while the catalog is being filled). $MEMFIT_EVAL_DIR, else ../../shared/eval from this file.
std::vector<memfit::Model> EvalModels() {
  namespace fs = std::filesystem;
  std::vector<memfit::Model> models;
  const char* env = std::getenv("MEMFIT_EVAL_DIR");
  fs::path dir;
  for (fs::path candidate : {env ? fs::path(env) : fs::path(),
                             fs::path(__FILE__).parent_path() / "../../shared/eval",
                             fs::path("../shared/eval"), fs::path("../../shared/eval")}) {
    if (!candidate.empty() && fs::exists(candidate / "models")) {
      dir = candidate;
      break;
    }
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir / "models", ec)) {
    std::ifstream file(entry.path() / "config.json");
    if (!file) continue;
    std::stringstream text;
    text << file.rdbuf();
    auto config = memfit::HfConfig::Parse(text.str());
    if (!config) continue;
    auto model = memfit::BuildFromConfig(*config);
    if (!model) continue;
    model->name = entry.path().filename().string();
    models.push_back(std::move(*model));
  }
  return models;
}

void RunGrid(benchmark::State& state, const std::vector<memfit::Model>& models) {
  const auto gpus = memfit::GpuCatalog();
  for (auto _ : state) {
    size_t fits = 0;
    for (const auto& m : models) {
      const memfit::FitModel model(m);  // the module tree, once per model
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

void BM_FitGridCatalog(benchmark::State& state) { RunGrid(state, CatalogModels()); }
BENCHMARK(BM_FitGridCatalog)->Unit(benchmark::kMillisecond);

void BM_FitGridEvalConfigs(benchmark::State& state) {
  const auto models = EvalModels();
  if (models.empty()) {
    state.SkipWithError("shared/eval not found (set MEMFIT_EVAL_DIR)");
    return;
  }
  RunGrid(state, models);
}
BENCHMARK(BM_FitGridEvalConfigs)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
