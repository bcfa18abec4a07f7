#pragma once
// Pieces of the fit planner shared by fit.cc, fit_sizes.cc and fit_advice.cc.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "memfit/fit.h"
#include "plan/module_tree.h"

namespace memfit::plan {

using SizeFn = std::function<uint64_t(const Tensor&)>;

// How many bytes each tensor takes in a what-if (the chosen dtype, a quantization, pruning), with
// a key that names the rule: two rules with the same key give the same sizes for the same model,
// so their tree sizes are computed once per model (SizeCache) and shared by every plan.
struct SizeRule {
  std::string key;  // "dtype:bfloat16", "bnb-nf4", "gguf:Q4_K_M", ...
  SizeFn size_of;
};
SizeRule DtypeRule(LoadDtype dtype);  // LoadedTensorBytes at `dtype`
// The weights as the plan loads them: the runtime's own rule (QLoRA's NF4 base), else `dtype`.
SizeRule WeightRule(const RuntimeModel& runtime, LoadDtype dtype);

// A rule's sizes summed over the module tree (compute_module_sizes), parameters scaled by
// `factor` (1 + gradient and optimizer bytes per weight byte), and the resident weights.
struct WeightSizes {
  TreeSizes sizes;
  uint64_t weight_bytes = 0;  // every untied tensor at the rule, unscaled
};

// WeightSizes per (rule key, factor) for one model; thread-safe (a FitModel may serve several
// requests at once). Bounded: past kMaxEntries it starts over.
class SizeCache {
 public:
  static constexpr size_t kMaxEntries = 64;
  std::shared_ptr<const WeightSizes> Get(const Model& model, const ModuleTree& tree,
                                         const SizeRule& rule, double factor);
  // Per tensor, computed on first use: whether it is a linear weight inside a no-split block
  // (what quantization libraries replace: nn.Linear in decoder layers), and the fraction of it
  // read per decoded token (ActiveFraction).
  std::shared_ptr<const std::vector<char>> LinearWeights(const Model& model, const ModuleTree& tree);
  std::shared_ptr<const std::vector<double>> ActiveFractions(const Model& model);

 private:
  std::mutex mutex_;
  std::map<std::pair<std::string, double>, std::shared_ptr<const WeightSizes>> entries_;
  std::shared_ptr<const std::vector<char>> linear_;
  std::shared_ptr<const std::vector<double>> active_;
};

// One placement of the model on the request's devices with given weight sizes and runtime bytes.
struct Placement {
  DeviceMap map;
  Verdict verdict = Verdict::kDoesNotFit;
  uint64_t weight_bytes = 0;
  uint64_t total_bytes = 0;  // weights + runtime (per-GPU bytes counted once per GPU used)
  bool packed = false;       // placed without accelerate's largest-block reserve
  FitTotalTerms terms{};     // total_bytes, term by term
};

// Places the model: accelerate's map first; when that offloads or fails but a packed map (no
// reserve) fits on the GPUs, the packed one. `gpus` overrides request.gpus when given.
// `detailed` false: numbers and verdict only (no module lists or entries), for what-ifs.
Placement Place(const FitModel& model, const FitRequest& request, const SizeRule& rule,
                const RuntimeBytes& runtime, bool offload_allowed,
                const std::vector<DeviceSpec>* gpus = nullptr, bool detailed = true);

// Fraction of a tensor read per decoded token: k/E for routed experts, 1 otherwise.
double ActiveFraction(const Model& model, const Tensor& tensor);

std::vector<Advice> BuildAdvice(const FitModel& model, const FitRequest& request,
                                const RuntimeModel& runtime, const FitPlan& plan);

}  // namespace memfit::plan
