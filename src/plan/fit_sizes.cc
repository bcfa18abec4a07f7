// Weight sizes per what-if, computed once per model (plan/fit_internal.h).

#include <cmath>

#include "memfit/checked_math.h"
#include "plan/fit_internal.h"

namespace memfit::plan {

SizeRule DtypeRule(LoadDtype dtype) {
  return {fmt::format("dtype:{}", static_cast<int>(dtype)),
          [dtype](const Tensor& t) { return LoadedTensorBytes(t, dtype); }};
}

SizeRule WeightRule(const RuntimeModel& runtime, LoadDtype dtype) {
  if (runtime.weight_size_of) return {runtime.weight_rule_key, runtime.weight_size_of};
  return DtypeRule(dtype);
}

std::shared_ptr<const WeightSizes> SizeCache::Get(const Model& model, const ModuleTree& tree,
                                                  const SizeRule& rule, double factor) {
  const auto key = std::make_pair(rule.key, factor);
  {
    std::lock_guard lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) return it->second;
  }
  auto out = std::make_shared<WeightSizes>();
  DeviceMapOptions options;
  options.size_of = [&rule, factor](const Tensor& t) {
    uint64_t bytes = rule.size_of(t);
    if (factor == 1.0 || t.kind != TensorKind::kParameter) return bytes;
    double scaled = std::ceil(static_cast<double>(bytes) * factor);
    return scaled >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(scaled);
  };
  out->sizes = ComputeSizes(tree, model, options);
  for (const auto& t : model.tensors) {
    if (t.tied_to.empty()) out->weight_bytes = CheckedAdd(out->weight_bytes, rule.size_of(t)).value_or(UINT64_MAX);
  }
  std::lock_guard lock(mutex_);
  if (entries_.size() >= kMaxEntries) entries_.clear();
  return entries_.emplace(key, std::move(out)).first->second;
}

std::shared_ptr<const std::vector<char>> SizeCache::LinearWeights(const Model& model,
                                                                 const ModuleTree& tree) {
  {
    std::lock_guard lock(mutex_);
    if (linear_) return linear_;
  }
  auto out = std::make_shared<std::vector<char>>(model.tensors.size(), 0);
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    const Tensor& t = model.tensors[i];
    (*out)[i] = t.kind == TensorKind::kParameter && t.shape.size() == 2 &&
                IsFloatingPoint(t.dtype) && t.dtype != Dtype::kBlockQuantized &&
                t.tied_to.empty() && tree.nodes[static_cast<size_t>(tree.tensor_node[i])].in_block;
  }
  std::lock_guard lock(mutex_);
  if (!linear_) linear_ = std::move(out);
  return linear_;
}

std::shared_ptr<const std::vector<double>> SizeCache::ActiveFractions(const Model& model) {
  {
    std::lock_guard lock(mutex_);
    if (active_) return active_;
  }
  auto out = std::make_shared<std::vector<double>>(model.tensors.size(), 1.0);
  for (size_t i = 0; i < model.tensors.size(); ++i) (*out)[i] = ActiveFraction(model, model.tensors[i]);
  std::lock_guard lock(mutex_);
  if (!active_) active_ = std::move(out);
  return active_;
}

}  // namespace memfit::plan
