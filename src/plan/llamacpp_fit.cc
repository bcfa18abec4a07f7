// Fitting a GGUF model onto GPUs like llama.cpp's --fit (common/fit.cpp, see
// docs/reference/gguf-and-llamacpp.md section 2.6), over memfit's estimate instead of dry-run
// allocations:
//   1. keep a margin per GPU (default 1024 MiB, -fitt), GPU memory given as total: the CUDA
//      context is charged inside the estimate;
//   2. everything offloaded: the longest context (multiple of 256) between -fitc (4096) and the
//      training context that fits; context is never changed when the user gave -c;
//   3. MoE models: move the experts of the first N layers to the host (--n-cpu-moe), smallest N;
//   4. otherwise the largest -ngl at the minimum context.
// Multi-GPU splits are proportional to the memory left after the margin (-ts).

#include <algorithm>

#include "memfit/checked_math.h"
#include "memfit/llamacpp.h"
#include "memfit/units.h"

namespace memfit {
namespace {

struct Checker {
  const Model& model;
  const LlamaCppFitOptions& fit;
  std::vector<uint64_t> margins;

  // Estimate and whether every device fits (nullopt on estimate errors).
  Result<std::pair<bool, LlamaCppEstimate>> Try(const LlamaCppOptions& o) const {
    MEMFIT_ASSIGN_OR_RETURN(LlamaCppEstimate e, EstimateLlamaCpp(model, o));
    bool ok = true;
    for (size_t g = 0; g < fit.gpu_bytes.size(); ++g) {
      // A margin near 2^64 (-fitt from the user) must not wrap into a fit.
      auto needed = CheckedAdd(e.devices[g].total(), margins[g]);
      if (!needed || *needed > fit.gpu_bytes[g]) ok = false;
    }
    if (fit.host_bytes && e.host().total() > fit.host_bytes) ok = false;
    return std::make_pair(ok, std::move(e));
  }
};

}  // namespace

Result<LlamaCppFitPlan> FitLlamaCpp(const Model& model, const LlamaCppFitOptions& fit) {
  const Hyperparameters& hp = model.hp;
  const size_t G = fit.gpu_bytes.size();
  Checker check{model, fit, {}};
  for (size_t g = 0; g < G; ++g) {
    if (fit.margin_bytes.empty()) check.margins.push_back(0);
    else check.margins.push_back(fit.margin_bytes.size() == 1 ? fit.margin_bytes[0]
                                                              : fit.margin_bytes.at(std::min(g, fit.margin_bytes.size() - 1)));
  }
  if (fit.margin_bytes.size() > 1 && fit.margin_bytes.size() != G) {
    return MakeError("--fit-target: {} margins for {} GPUs", fit.margin_bytes.size(), G);
  }
  LlamaCppFitPlan plan;
  LlamaCppOptions o = fit.base;
  o.num_gpus = static_cast<uint32_t>(G);
  o.gpu_free_bytes.clear();
  if (o.tensor_split.empty() && G > 1) {
    for (size_t g = 0; g < G; ++g) {
      uint64_t usable = fit.gpu_bytes[g] > check.margins[g] + o.cuda_context_bytes
                            ? fit.gpu_bytes[g] - check.margins[g] - o.cuda_context_bytes : 0;
      o.tensor_split.push_back(static_cast<double>(usable / kMiB));
    }
  }
  const uint64_t train_ctx = hp.max_position_embeddings;
  const uint64_t ctx_max = fit.context_fixed ? fit.base.context_tokens : (train_ctx ? train_ctx : 4096);
  const uint64_t ctx_min = fit.context_fixed ? ctx_max : std::min(fit.min_context_tokens, ctx_max);
  auto finish = [&](bool ok, const LlamaCppOptions& chosen, LlamaCppEstimate e) -> LlamaCppFitPlan {
    plan.fits = ok;
    plan.options = chosen;
    plan.estimate = std::move(e);
    plan.arguments = LlamaCppArguments(model, chosen);
    return std::move(plan);
  };
  // Longest context (multiple of 256, within [ctx_min, ctx_max]) that fits with `base`.
  auto longest_context = [&](LlamaCppOptions base) -> Result<std::optional<LlamaCppOptions>> {
    base.context_tokens = ctx_max;
    MEMFIT_ASSIGN_OR_RETURN(auto top, check.Try(base));
    if (top.first) return std::optional<LlamaCppOptions>(base);
    if (ctx_min == ctx_max) return std::optional<LlamaCppOptions>{};
    base.context_tokens = ctx_min;
    MEMFIT_ASSIGN_OR_RETURN(auto bottom, check.Try(base));
    if (!bottom.first) return std::optional<LlamaCppOptions>{};
    uint64_t lo = (ctx_min + 255) / 256, hi = ctx_max / 256;  // lo fits (ctx_min), hi does not
    LlamaCppOptions best = base;
    while (hi > lo + 1) {
      uint64_t mid = lo + (hi - lo) / 2;
      base.context_tokens = mid * 256;
      MEMFIT_ASSIGN_OR_RETURN(auto r, check.Try(base));
      if (r.first) {
        lo = mid;
        best = base;
      } else {
        hi = mid;
      }
    }
    return std::optional<LlamaCppOptions>(best);
  };

  // 1. Everything offloaded, longest context.
  if (!fit.gpu_layers_fixed) o.gpu_layers = -1;
  MEMFIT_ASSIGN_OR_RETURN(auto full, longest_context(o));
  if (full) {
    plan.steps.push_back(fmt::format("all {} layers offloaded at context {}", hp.num_layers + 1, full->context_tokens));
    MEMFIT_ASSIGN_OR_RETURN(auto r, check.Try(*full));
    return finish(true, *full, std::move(r.second));
  }
  plan.steps.push_back(fmt::format("{} at context {} does not fit", fit.gpu_layers_fixed ? "the given -ngl" : "full offload", ctx_min));
  LlamaCppOptions at_min = o;
  at_min.context_tokens = ctx_min;
  // 2. MoE: experts of the first N layers to the host.
  if (hp.num_experts > 0 && !fit.gpu_layers_fixed) {
    LlamaCppOptions t = at_min;
    t.n_cpu_moe = hp.num_layers;
    MEMFIT_ASSIGN_OR_RETURN(auto all_cpu, check.Try(t));
    if (all_cpu.first) {
      uint64_t lo = 0, hi = hp.num_layers;  // lo does not fit, hi fits
      while (hi > lo + 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        t.n_cpu_moe = mid;
        MEMFIT_ASSIGN_OR_RETURN(auto r, check.Try(t));
        (r.first ? hi : lo) = mid;
      }
      t.n_cpu_moe = hi;
      plan.steps.push_back(fmt::format("experts of the first {} layers kept on the host", hi));
      MEMFIT_ASSIGN_OR_RETURN(auto longer, longest_context(t));
      LlamaCppOptions chosen = longer ? *longer : t;
      MEMFIT_ASSIGN_OR_RETURN(auto r, check.Try(chosen));
      return finish(r.first, chosen, std::move(r.second));
    }
    at_min.n_cpu_moe = hp.num_layers;
    plan.steps.push_back("even with every expert on the host the model does not fit: reducing -ngl");
  }
  if (fit.gpu_layers_fixed) {
    MEMFIT_ASSIGN_OR_RETURN(auto r, check.Try(at_min));
    return finish(false, at_min, std::move(r.second));
  }
  // 3. Largest -ngl at the minimum context.
  int64_t lo = -1, hi = static_cast<int64_t>(hp.num_layers) + 1;  // hi (all) does not fit
  while (hi > lo + 1) {
    int64_t mid = lo + (hi - lo) / 2;
    at_min.gpu_layers = mid;
    MEMFIT_ASSIGN_OR_RETURN(auto r, check.Try(at_min));
    (r.first ? lo : hi) = mid;
  }
  if (lo < 0) {
    plan.steps.push_back("nothing fits, not even -ngl 0");
    at_min.gpu_layers = 0;
    MEMFIT_ASSIGN_OR_RETURN(auto r, check.Try(at_min));
    return finish(false, at_min, std::move(r.second));
  }
  at_min.gpu_layers = lo;
  plan.steps.push_back(fmt::format("-ngl {} of {} at context {}", lo, hp.num_layers + 1, ctx_min));
  MEMFIT_ASSIGN_OR_RETURN(auto r, check.Try(at_min));
  return finish(r.first, at_min, std::move(r.second));
}

}  // namespace memfit
