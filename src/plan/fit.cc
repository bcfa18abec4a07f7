// The fit planner: placement, verdict, GPU count, limits and speed bounds. Formulas and sources:
// docs/estimates.md, "Fit planner".

#include "memfit/fit.h"

#include <algorithm>
#include <cmath>

#include "memfit/checked_math.h"
#include "memfit/units.h"
#include "plan/fit_internal.h"

namespace memfit {
namespace plan {

double ActiveFraction(const Model& model, const Tensor& tensor) {
  if (model.hp.num_experts == 0 || model.hp.experts_per_token == 0) return 1.0;
  // "...experts.<n>..." (Mixtral, Qwen-MoE, DeepSeek): a routed expert.
  size_t at = tensor.name.find(".experts.");
  if (at == std::string::npos) return 1.0;
  char next = tensor.name[at + 9];
  if (next < '0' || next > '9') return 1.0;
  return std::min(1.0, static_cast<double>(model.hp.experts_per_token) /
                           static_cast<double>(model.hp.num_experts));
}

Placement Place(const FitModel& fit_model, const FitRequest& request, const SizeRule& rule,
                const RuntimeBytes& runtime, bool offload_allowed,
                const std::vector<DeviceSpec>* gpus, bool detailed) {
  const Model& model = fit_model.model();
  const ModuleTree& tree = fit_model.tree();
  const auto& devices = gpus ? *gpus : request.gpus;
  MemoryBudget budget;
  for (const auto& d : devices) {
    uint64_t keep = CheckedAdd(request.reserve_bytes_per_gpu, runtime.per_gpu_bytes)
                        .value_or(UINT64_MAX);
    budget.gpu_bytes.push_back(d.memory_bytes > keep ? d.memory_bytes - keep : 0);
  }
  if (offload_allowed) {
    budget.cpu_bytes = request.ram_bytes;
    budget.disk_bytes = request.disk_bytes;
  }
  DeviceMapOptions options;
  options.strategy = request.strategy;
  options.record_modules = detailed;
  const double factor = 1.0 + std::max(0.0, runtime.per_weight_byte);
  const auto weights = fit_model.sizes().Get(model, tree, rule, factor);
  // A layer's KV cache travels with its block (runtime.per_layer_bytes).
  TreeSizes with_blocks;
  const TreeSizes* sizes = &weights->sizes;
  if (runtime.per_layer_bytes > 0) {
    with_blocks = AddBlockBytes(tree, weights->sizes, runtime.per_layer_bytes);
    sizes = &with_blocks;
  }
  Placement out;
  out.map = InferDeviceMap(tree, *sizes, model, budget, options);
  if (!out.map.fits_on_gpus()) {
    DeviceMapOptions packed = options;
    packed.strategy = DeviceMapStrategy::kSequential;
    packed.keep_largest_free = false;
    MemoryBudget gpus_only{.gpu_bytes = budget.gpu_bytes};
    DeviceMap map = InferDeviceMap(tree, *sizes, model, gpus_only, packed);
    if (map.fits_on_gpus()) {
      out.map = std::move(map);
      out.packed = true;
    }
  }
  out.weight_bytes = weights->weight_bytes;
  uint64_t gpus_used = 0;
  for (const auto& d : out.map.devices) {
    if (d.kind == DeviceKind::kGpu && d.used_bytes > 0) ++gpus_used;
  }
  out.total_bytes = out.map.total_bytes +
                    std::max<uint64_t>(gpus_used, 1) * runtime.per_gpu_bytes;
  // The terms: the tree at factor 1 (weights), the factor's extra (training states), the blocks'
  // extra (KV cache), the runtime per GPU used; they add up to total_bytes.
  const uint64_t scaled = weights->sizes.size.empty() ? 0 : weights->sizes.size[0];
  const auto plain = factor == 1.0 ? weights : fit_model.sizes().Get(model, tree, rule, 1.0);
  const uint64_t unscaled = plain->sizes.size.empty() ? 0 : plain->sizes.size[0];
  out.terms.weight_bytes = std::min(unscaled, scaled);
  out.terms.state_bytes = scaled - out.terms.weight_bytes;
  out.terms.kv_cache_bytes = out.map.total_bytes > scaled ? out.map.total_bytes - scaled : 0;
  out.terms.gpus_used = std::max<uint64_t>(gpus_used, 1);
  out.terms.per_gpu_bytes = runtime.per_gpu_bytes;
  if (!out.map.unplaced.empty()) out.verdict = Verdict::kDoesNotFit;
  else if (out.map.offloaded_bytes > 0) out.verdict = Verdict::kFitsWithOffload;
  else out.verdict = Verdict::kFits;
  return out;
}

}  // namespace plan

double PrefillAttentionFlopsPerToken(const Hyperparameters& hp, uint64_t prompt_tokens) {
  if (prompt_tokens == 0) return 0;
  const double s = static_cast<double>(prompt_tokens);
  double flops = 0;
  for (const LayerInfo& layer : hp.layers) {
    if (layer.attention == AttentionKind::kNone || layer.recurrent) continue;
    // Sum over positions t = 1..s of min(t, w): s(s+1)/2 without a window (or a window >= s).
    double attended = s * (s + 1) / 2;
    if (layer.attention == AttentionKind::kSliding && layer.window_tokens > 0 &&
        layer.window_tokens < prompt_tokens) {
      const double w = static_cast<double>(layer.window_tokens);
      attended = w * (w + 1) / 2 + (s - w) * w;
    }
    flops += 2.0 * static_cast<double>(layer.num_heads) *
             static_cast<double>(layer.head_dim_k + layer.head_dim_v) * attended / s;
  }
  return flops;
}

namespace {

using plan::Placement;

// Speed upper bounds from where each weight byte sits (docs/estimates.md, "Speed bounds").
SpeedBound Speed(const FitModel& fit_model, const FitRequest& request,
                 const plan::SizeFn& size_of, const Placement& placement,
                 const RuntimeBytes& runtime, uint64_t prompt_tokens) {
  const Model& model = fit_model.model();
  const plan::ModuleTree& tree = fit_model.tree();
  const auto fractions = fit_model.sizes().ActiveFractions(model);
  SpeedBound out;
  const auto& map = placement.map;
  // Device of each placed module; a tensor belongs to its deepest placed ancestor.
  std::vector<int> device_of(tree.nodes.size(), -1);
  std::vector<uint64_t> blocks(map.devices.size(), 0);
  for (size_t d = 0; d < map.devices.size(); ++d) {
    for (const auto& m : map.devices[d].modules) {
      int n = tree.Find(m);
      if (n >= 0) device_of[static_cast<size_t>(n)] = static_cast<int>(d);
    }
  }
  for (size_t n = 0; n < tree.nodes.size(); ++n) {
    if (!tree.nodes[n].no_split) continue;
    for (int a = static_cast<int>(n); a >= 0; a = tree.nodes[a].parent) {
      if (device_of[a] >= 0) {
        ++blocks[static_cast<size_t>(device_of[a])];
        break;
      }
    }
  }
  std::vector<double> active_bytes(map.devices.size(), 0);
  std::vector<double> active_params(map.devices.size(), 0);
  double total_active_params = 0;
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    const Tensor& t = model.tensors[i];
    if (!t.tied_to.empty()) continue;
    int device = -1;
    for (int a = tree.tensor_node[i]; a >= 0 && device < 0; a = tree.nodes[a].parent) {
      device = device_of[a];
    }
    double fraction = (*fractions)[i];
    double params = t.kind == TensorKind::kParameter ? static_cast<double>(LogicalParams(t)) * fraction : 0;
    total_active_params += params;
    if (device < 0) continue;
    active_bytes[static_cast<size_t>(device)] += static_cast<double>(size_of(t)) * fraction;
    active_params[static_cast<size_t>(device)] += params;
  }
  out.active_parameters = static_cast<uint64_t>(total_active_params);
  // Attention work of a prompt of the chosen context, shared out by each device's share of the
  // layers (no-split blocks).
  const double attention_flops = PrefillAttentionFlopsPerToken(model.hp, prompt_tokens);
  uint64_t all_blocks = 0;
  for (uint64_t b : blocks) all_blocks += b;
  auto compute_flops = [&](size_t d) {
    double flops = 2 * active_params[d];
    if (all_blocks > 0) {
      flops += attention_flops * static_cast<double>(blocks[d]) / static_cast<double>(all_blocks);
    }
    return flops;
  };
  double decode_s = 0;
  double prefill_s = 0;
  double bytes = 0;
  const GpuSpec* first_gpu = request.gpus.empty() ? nullptr : request.gpus.front().gpu;
  bool bandwidth_known = true;
  bool flops_known = true;
  for (size_t d = 0; d < map.devices.size(); ++d) {
    const auto& dev = map.devices[d];
    double kv = static_cast<double>(runtime.per_layer_bytes) * static_cast<double>(blocks[d]);
    double read = active_bytes[d] + kv;
    bytes += read;
    if (read == 0) continue;
    if (dev.kind == DeviceKind::kGpu) {
      const GpuSpec* gpu = request.gpus[static_cast<size_t>(dev.index)].gpu;
      if (!gpu || gpu->bandwidth_gb_s <= 0) bandwidth_known = false;
      else decode_s += read / (gpu->bandwidth_gb_s * 1e9);
      if (!gpu || gpu->tensor_tflops <= 0) flops_known = false;
      else prefill_s += compute_flops(d) / (gpu->tensor_tflops * 1e12);
    } else {
      // Offloaded weights cross PCIe (and are read from disk first) on every forward pass and
      // run on GPU 0 (accelerate's hooks).
      decode_s += read / (request.pcie_gb_s * 1e9);
      if (dev.kind == DeviceKind::kDisk) decode_s += read / (request.disk_gb_s * 1e9);
      if (!first_gpu || first_gpu->tensor_tflops <= 0) flops_known = false;
      else prefill_s += compute_flops(d) / (first_gpu->tensor_tflops * 1e12);
    }
  }
  out.bytes_per_token = static_cast<uint64_t>(bytes);
  if (!bandwidth_known) {
    out.notes.push_back("decode bound unknown: a GPU given by size has no known bandwidth");
  } else if (decode_s > 0) {
    out.decode_tokens_per_s = 1.0 / decode_s;
  }
  if (!flops_known) {
    out.notes.push_back("prefill bound unknown: a GPU given by size has no known TFLOPS");
  } else if (prefill_s > 0) {
    out.prefill_tokens_per_s = 1.0 / prefill_s;
  }
  if (placement.map.offloaded_bytes > 0) {
    out.notes.push_back(fmt::format("offloaded weights cross PCIe at {} GB/s{} each token",
                                    request.pcie_gb_s,
                                    placement.map.devices.back().kind == DeviceKind::kDisk
                                        ? fmt::format(" after a {} GB/s disk read", request.disk_gb_s)
                                        : ""));
  }
  return out;
}

// The fewest GPUs of the first kind that hold everything, or why no number does.
struct GpuCount {
  std::optional<uint64_t> gpus;
  std::string no_count_reason;
};

GpuCount GpusNeeded(const FitModel& model, const FitRequest& request, const plan::SizeRule& rule,
                    uint64_t weights, const RuntimeBytes& runtime, uint64_t largest_block) {
  if (request.gpus.empty()) return {};
  const DeviceSpec& unit = request.gpus.front();
  uint64_t usable = unit.memory_bytes > request.reserve_bytes_per_gpu + runtime.per_gpu_bytes
                        ? unit.memory_bytes - request.reserve_bytes_per_gpu - runtime.per_gpu_bytes
                        : 0;
  if (usable == 0) {
    return {std::nullopt,
            fmt::format("the runtime every GPU holds ({}{}) leaves nothing of one {} ({})",
                        FormatBytes(runtime.per_gpu_bytes),
                        request.reserve_bytes_per_gpu
                            ? " + " + FormatBytes(request.reserve_bytes_per_gpu) + " kept free"
                            : "",
                        unit.label, FormatBytes(unit.memory_bytes))};
  }
  if (largest_block > usable) {
    return {std::nullopt, fmt::format("its largest block ({}) is larger than the {} one {} has "
                                      "left after the runtime per GPU",
                                      FormatBytes(largest_block), FormatBytes(usable), unit.label)};
  }
  FitRequest gpus_only = request;
  gpus_only.ram_bytes.reset();
  gpus_only.disk_bytes.reset();
  uint64_t n = std::max<uint64_t>(1, weights / usable + (weights % usable != 0));
  for (int tries = 0; tries < 64 && n <= 1024; ++tries, ++n) {
    std::vector<DeviceSpec> gpus(n, unit);
    auto placed = plan::Place(model, gpus_only, rule, runtime, false, &gpus, false);
    if (placed.verdict == Verdict::kFits) return {n, ""};
  }
  return {std::nullopt, fmt::format("none of up to {} tried holds it", n - 1)};
}

}  // namespace

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFits: return "fits";
    case Verdict::kFitsWithOffload: return "fits with offload";
    case Verdict::kDoesNotFit: return "does not fit";
  }
  return "?";
}

std::string_view QualityCostName(int cost) {
  static constexpr std::string_view kNames[] = {"none", "negligible", "small", "moderate",
                                                "large"};
  return kNames[std::clamp(cost, 0, 4)];
}

FitModel::FitModel(const Model& model)
    : model_(&model),
      tree_(std::make_shared<const plan::ModuleTree>(plan::BuildModuleTree(model))),
      sizes_(std::make_shared<plan::SizeCache>()) {}

Result<FitPlan> PlanFit(const Model& model, const FitRequest& request,
                        const RuntimeModel& runtime) {
  return PlanFit(FitModel(model), request, runtime);
}

Result<FitPlan> PlanFit(const FitModel& prepared, const FitRequest& request,
                        const RuntimeModel& runtime) {
  if (request.gpus.empty()) return MakeError("fit: no GPU given (use --gpu NAME or --gpu 24GiB)");
  FitPlan plan;
  RuntimeBytes bytes;
  if (runtime.bytes_for) {
    MEMFIT_ASSIGN_OR_RETURN(bytes, runtime.bytes_for(runtime.context_tokens, runtime.batch));
  }
  plan.runtime = bytes;
  const plan::SizeRule rule = plan::WeightRule(runtime, request.dtype);
  Placement placed = plan::Place(prepared, request, rule, bytes, runtime.offload_allowed);
  plan.verdict = placed.verdict;
  plan.weight_bytes = placed.weight_bytes;
  plan.total_bytes = placed.total_bytes;
  plan.terms = placed.terms;
  plan.map = std::move(placed.map);
  if (placed.packed) {
    plan.notes.push_back(fmt::format(
        "accelerate's infer_auto_device_map would keep the largest block ({}) free on GPU 0 and "
        "offload; this map packs the GPUs instead: pass it as device_map explicitly",
        FormatBytes(plan.map.largest_block_bytes)));
  }
  if (plan.map.offloaded_buffer_bytes > 0) {
    plan.notes.push_back(fmt::format(
        "{} of buffers of offloaded modules stay on GPU 0 (accelerate offload_buffers=False)",
        FormatBytes(plan.map.offloaded_buffer_bytes)));
  }
  GpuCount count = GpusNeeded(prepared, request, rule, plan.total_bytes - plan.terms.per_gpu_bytes *
                                                     plan.terms.gpus_used,
                              bytes, plan.map.largest_block_bytes);
  plan.gpus_needed = count.gpus;
  plan.no_count_reason = std::move(count.no_count_reason);
  // Limits: the largest context and batch whose plan still fits on the GPUs alone.
  if (runtime.bytes_for) {
    auto fits = [&](uint64_t context, uint64_t batch) {
      auto b = runtime.bytes_for(context, batch);
      if (!b) return false;
      return plan::Place(prepared, request, rule, *b, false, nullptr, false).verdict ==
             Verdict::kFits;
    };
    auto search = [&](uint64_t hi, auto&& ok) -> std::optional<uint64_t> {
      if (hi == 0 || !ok(1)) return std::nullopt;
      uint64_t lo = 1;
      while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (ok(mid)) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    plan.limits.max_context_tokens = search(
        runtime.max_context_tokens, [&](uint64_t c) { return fits(c, runtime.batch); });
    plan.limits.max_batch = search(4096, [&](uint64_t b) {
      return fits(runtime.context_tokens, b);
    });
  }
  Placement for_speed{.map = plan.map};
  plan.speed = Speed(prepared, request, rule.size_of, for_speed, bytes, runtime.context_tokens);
  if (request.advise) plan.advice = plan::BuildAdvice(prepared, request, runtime, plan);
  return plan;
}

}  // namespace memfit
