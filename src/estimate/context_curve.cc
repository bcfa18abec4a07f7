// Memory against context, and each GPU's longest context (memfit/context_curve.h).

#include "memfit/context_curve.h"

#include <algorithm>
#include <fmt/format.h>

#include "memfit/engine.h"

namespace memfit {
namespace {

constexpr uint64_t kUnknownMaxContext = 131072;

bool Paged(Engine engine) { return engine == Engine::kVllm || engine == Engine::kSglang; }

// The metric at `context`: the total per GPU, or the batch's KV cache for paged engines (asked
// without the GPU's memory: with it, the engine's cache is the whole pool it pre-allocates).
Result<uint64_t> MetricAt(const Model& model, InferenceOptions o, uint64_t context) {
  o.context_tokens = context;
  if (Paged(o.engine)) o.gpu_memory_bytes = 0;
  MEMFIT_ASSIGN_OR_RETURN(InferenceEstimate e, EstimateInference(model, o));
  return Paged(o.engine) ? e.kv_cache_bytes : e.total_bytes;
}

// The largest context in (lo, hi) whose metric is within budget, knowing lo fits and hi does not.
Result<uint64_t> Bisect(const Model& model, const InferenceOptions& o, uint64_t lo, uint64_t hi,
                        uint64_t budget) {
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    MEMFIT_ASSIGN_OR_RETURN(uint64_t bytes, MetricAt(model, o, mid));
    (bytes <= budget ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

Result<ContextCurve> EstimateContextCurve(const Model& model, const InferenceOptions& options,
                                          const std::vector<CurveGpu>& gpus) {
  ContextCurve curve;
  curve.metric = Paged(options.engine) ? "kv_cache" : "total_per_gpu";
  curve.max_context = model.hp.max_position_embeddings;
  if (curve.max_context == 0) {
    curve.max_context = std::max(kUnknownMaxContext, options.context_tokens);
    curve.assumptions.push_back(fmt::format(
        "the config names no longest context (max_position_embeddings): the curve ends at {} "
        "tokens", curve.max_context));
  }
  std::vector<uint64_t> contexts{std::min<uint64_t>(256, curve.max_context), curve.max_context};
  for (uint64_t c = 512; c < curve.max_context; c *= 2) contexts.push_back(c);
  if (options.context_tokens > 0 && options.context_tokens <= curve.max_context) {
    contexts.push_back(options.context_tokens);
  }
  std::sort(contexts.begin(), contexts.end());
  contexts.erase(std::unique(contexts.begin(), contexts.end()), contexts.end());
  for (uint64_t c : contexts) {
    MEMFIT_ASSIGN_OR_RETURN(uint64_t bytes, MetricAt(model, options, c));
    curve.points.push_back({c, bytes});
  }
  for (const CurveGpu& gpu : gpus) {
    CurveLimit limit;
    limit.gpu = gpu.name;
    limit.budget_bytes = gpu.memory_bytes;
    InferenceOptions o = options;
    if (Paged(options.engine)) {
      // The pool the engine leaves on this GPU: its memory x utilization minus weights, the
      // profile run's activations and non-torch memory; it does not depend on the context.
      o.gpu_memory_bytes = gpu.memory_bytes;
      if (gpu.compute_capability) o.compute_capability = gpu.compute_capability;
      auto e = EstimateInference(model, o);
      if (!e) {
        limit.budget_bytes = 0;
        limit.longest_context = 0;
        limit.note = e.error().message;
        curve.limits.push_back(std::move(limit));
        continue;
      }
      limit.budget_bytes = e->serving ? e->serving->kv_pool_bytes : 0;
      if (limit.budget_bytes == 0) {
        limit.longest_context = 0;
        limit.note = "the weights and the engine's own memory leave no KV pool";
        curve.limits.push_back(std::move(limit));
        continue;
      }
    }
    const auto over = std::find_if(curve.points.begin(), curve.points.end(),
                                   [&](const CurvePoint& p) { return p.bytes > limit.budget_bytes; });
    if (over == curve.points.end()) {
      limit.longest_context = std::nullopt;
    } else if (over == curve.points.begin()) {
      // Below the first point: bisect from nothing.
      MEMFIT_ASSIGN_OR_RETURN(uint64_t bytes_at_one, MetricAt(model, o, 1));
      if (bytes_at_one > limit.budget_bytes) {
        limit.longest_context = 0;
      } else {
        MEMFIT_ASSIGN_OR_RETURN(uint64_t c, Bisect(model, o, 1, over->context, limit.budget_bytes));
        limit.longest_context = c;
      }
    } else {
      MEMFIT_ASSIGN_OR_RETURN(uint64_t c, Bisect(model, o, std::prev(over)->context, over->context,
                                                 limit.budget_bytes));
      limit.longest_context = c;
    }
    curve.limits.push_back(std::move(limit));
  }
  return curve;
}

}  // namespace memfit
