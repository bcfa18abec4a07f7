#pragma once
// Pieces of the fit planner shared by fit.cc and fit_advice.cc.

#include <functional>

#include "memfit/fit.h"
#include "plan/module_tree.h"

namespace memfit::plan {

using SizeFn = std::function<uint64_t(const Tensor&)>;

// One placement of the model on the request's devices with given weight sizes and runtime bytes.
struct Placement {
  DeviceMap map;
  Verdict verdict = Verdict::kDoesNotFit;
  uint64_t weight_bytes = 0;
  uint64_t total_bytes = 0;  // weights + runtime (per-GPU bytes counted once per GPU used)
  bool packed = false;       // placed without accelerate's largest-block reserve
};

// Places the model: accelerate's map first; when that offloads or fails but a packed map (no
// reserve) fits on the GPUs, the packed one. `gpus` overrides request.gpus when given.
// `tree`: the model's module tree (BuildModuleTree), built once per model by the caller.
Placement Place(const Model& model, const ModuleTree& tree, const FitRequest& request,
                const SizeFn& size_of, const RuntimeBytes& runtime, bool offload_allowed,
                const std::vector<DeviceSpec>* gpus = nullptr);

// Fraction of a tensor read per decoded token: k/E for routed experts, 1 otherwise.
double ActiveFraction(const Model& model, const Tensor& tensor);

std::vector<Advice> BuildAdvice(const Model& model, const ModuleTree& tree,
                                const FitRequest& request, const RuntimeModel& runtime,
                                const FitPlan& plan);

}  // namespace memfit::plan
