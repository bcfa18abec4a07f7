// Memory against context, and each GPU's longest context (memfit/context_curve.h).

#include "memfit/context_curve.h"

#include <algorithm>
#include <functional>
#include <fmt/format.h>

#include "memfit/engine.h"
#include "memfit/engine_release.h"

namespace memfit {
namespace {

constexpr uint64_t kUnknownMaxContext = 131072;

bool Paged(Engine engine) { return engine == Engine::kVllm || engine == Engine::kSglang; }

// The curve's metric at a context, for one GPU's settings.
using Metric = std::function<Result<uint64_t>(uint64_t context)>;
// What a GPU's metric is held against, and the metric with that GPU's settings; an error when the
// engine does not run there (the limit then says why).
struct GpuBudget {
  uint64_t budget_bytes = 0;
  Metric metric;
};
using BudgetFor = std::function<Result<GpuBudget>(const CurveGpu&)>;

// The largest context in (lo, hi) whose metric is within budget, knowing lo fits and hi does not.
Result<uint64_t> Bisect(const Metric& metric, uint64_t lo, uint64_t hi, uint64_t budget) {
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    MEMFIT_ASSIGN_OR_RETURN(uint64_t bytes, metric(mid));
    (bytes <= budget ? lo : hi) = mid;
  }
  return lo;
}

Result<ContextCurve> Curve(std::string metric_name, uint64_t model_max, uint64_t requested,
                           const Metric& metric, const std::vector<CurveGpu>& gpus,
                           const BudgetFor& budget_for) {
  ContextCurve curve;
  curve.metric = std::move(metric_name);
  curve.max_context = model_max;
  if (curve.max_context == 0) {
    curve.max_context = std::max(kUnknownMaxContext, requested);
    curve.assumptions.push_back(fmt::format(
        "the config names no longest context (max_position_embeddings): the curve ends at {} "
        "tokens", curve.max_context));
  }
  std::vector<uint64_t> contexts{std::min<uint64_t>(256, curve.max_context), curve.max_context};
  for (uint64_t c = 512; c < curve.max_context; c *= 2) contexts.push_back(c);
  if (requested > 0 && requested <= curve.max_context) contexts.push_back(requested);
  std::sort(contexts.begin(), contexts.end());
  contexts.erase(std::unique(contexts.begin(), contexts.end()), contexts.end());
  for (uint64_t c : contexts) {
    MEMFIT_ASSIGN_OR_RETURN(uint64_t bytes, metric(c));
    curve.points.push_back({c, bytes});
  }
  for (const CurveGpu& gpu : gpus) {
    CurveLimit limit;
    limit.gpu = gpu.name;
    auto budget = budget_for(gpu);
    if (!budget || budget->budget_bytes == 0) {
      limit.longest_context = 0;
      limit.note = budget ? "the weights and the engine's own memory leave no KV pool"
                          : budget.error().message;
      curve.limits.push_back(std::move(limit));
      continue;
    }
    limit.budget_bytes = budget->budget_bytes;
    // The points bracket the crossing; the bisection uses this GPU's own settings.
    const auto over = std::find_if(curve.points.begin(), curve.points.end(),
                                   [&](const CurvePoint& p) { return p.bytes > limit.budget_bytes; });
    if (over == curve.points.end()) {
      limit.longest_context = std::nullopt;
    } else {
      uint64_t lo = over == curve.points.begin() ? 0 : std::prev(over)->context;
      if (lo == 0) {
        MEMFIT_ASSIGN_OR_RETURN(uint64_t at_one, budget->metric(1));
        if (at_one <= limit.budget_bytes) lo = 1;
      }
      if (lo == 0) {
        limit.longest_context = 0;
      } else {
        MEMFIT_ASSIGN_OR_RETURN(uint64_t c, Bisect(budget->metric, lo, over->context, limit.budget_bytes));
        limit.longest_context = c;
      }
    }
    curve.limits.push_back(std::move(limit));
  }
  return curve;
}

}  // namespace

Result<ContextCurve> EstimateContextCurve(const Model& model, const InferenceOptions& options,
                                          const std::vector<CurveGpu>& gpus) {
  const bool paged = Paged(options.engine);
  // The total per GPU, or the batch's KV cache for paged engines (asked without the GPU's
  // memory: with it, the engine's cache is the whole pool it pre-allocates).
  const auto metric_for = [&model, paged](InferenceOptions o) -> Metric {
    // The release's defaults for the GPU first (its batch size sets sliding windows' extra
    // tokens), then no GPU: the batch's cache, not the pool.
    if (paged) {
      o = WithEngineDefaults(o);
      o.gpu_memory_bytes = 0;
    }
    return [&model, paged, o](uint64_t context) mutable -> Result<uint64_t> {
      o.context_tokens = context;
      MEMFIT_ASSIGN_OR_RETURN(InferenceEstimate e, EstimateInference(model, o));
      return paged ? e.kv_cache_bytes : e.total_bytes;
    };
  };
  const BudgetFor budget_for = [&](const CurveGpu& gpu) -> Result<GpuBudget> {
    if (!paged) return GpuBudget{gpu.memory_bytes, metric_for(options)};
    // The pool the engine leaves on this GPU: its memory x utilization minus weights, the
    // profile run's activations and non-torch memory; it does not depend on the context.
    InferenceOptions o = options;
    o.gpu_memory_bytes = gpu.memory_bytes;
    if (gpu.compute_capability) o.compute_capability = gpu.compute_capability;
    MEMFIT_ASSIGN_OR_RETURN(InferenceEstimate e, EstimateInference(model, o));
    return GpuBudget{e.serving ? e.serving->kv_pool_bytes : 0, metric_for(o)};
  };
  return Curve(paged ? "kv_cache" : "total_per_gpu", model.hp.max_position_embeddings,
               options.context_tokens, metric_for(options), gpus, budget_for);
}

Result<ContextCurve> EstimateLlamaCppContextCurve(const Model& model, const LlamaCppOptions& options,
                                                  const std::vector<CurveGpu>& gpus) {
  // Every layer on the GPU(s) (-ngl all): the largest GPU's allocations at each context.
  LlamaCppOptions base = options;
  base.gpu_layers = -1;
  base.num_gpus = std::max<uint32_t>(1, options.num_gpus);
  base.gpu_free_bytes.clear();
  const Metric metric = [&model, base](uint64_t context) mutable -> Result<uint64_t> {
    base.context_tokens = context;
    MEMFIT_ASSIGN_OR_RETURN(LlamaCppEstimate e, EstimateLlamaCpp(model, base));
    uint64_t largest = 0;
    for (const auto& d : e.devices) {
      if (!d.is_host) largest = std::max(largest, d.total());
    }
    return largest;
  };
  const BudgetFor budget_for = [&](const CurveGpu& gpu) -> Result<GpuBudget> {
    return GpuBudget{gpu.memory_bytes, metric};
  };
  return Curve("largest_gpu", model.hp.max_position_embeddings, options.context_tokens, metric,
               gpus, budget_for);
}

}  // namespace memfit
