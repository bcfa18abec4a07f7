// Each command's figures -> the hardware verdict (request/verdicts.h).

#include "request/verdicts.h"

#include <algorithm>

#include "memfit/gpu.h"
#include "memfit/train_search.h"
#include "memfit/units.h"

namespace memfit {
namespace {

void Part(std::vector<MemoryPart>& parts, std::string name, uint64_t bytes) {
  if (bytes > 0) parts.push_back({std::move(name), bytes});
}

bool InferenceFits(const InferenceEstimate& e, uint64_t gpu_bytes) {
  if (e.serving && e.serving->requested_bytes > 0) return e.serving->fits;
  return e.total_bytes <= gpu_bytes;
}

}  // namespace

std::optional<HardwareVerdict> InferenceVerdict(const Model& model, const InferenceRequest& r,
                                                const InferenceOptions& o,
                                                const InferenceEstimate& e) {
  if (r.gpu.empty() && r.gpu_memory.empty()) return std::nullopt;
  HardwareFacts f;
  uint64_t gpu_bytes = o.gpu_memory_bytes;
  if (!r.gpu.empty()) {
    auto gpu = ParseGpuChoice(r.gpu);
    if (gpu) f.gpu_label = gpu->device.label;
  }
  if (f.gpu_label.empty() || !r.gpu_memory.empty()) f.gpu_label = FormatBytes(gpu_bytes) + " GPU";
  f.gpu_memory_bytes = gpu_bytes;
  f.gpus = e.gpus;
  f.need_bytes = e.total_bytes;
  Part(f.parts, "weights", e.weights_bytes);
  Part(f.parts, "KV cache", e.kv_cache_bytes);
  Part(f.parts, "activations", e.activation_bytes);
  Part(f.parts, "CUDA context", e.cuda_context_bytes);
  Part(f.parts, "allocator reserve", e.allocator_reserve_bytes);
  Part(f.parts, "CUDA graphs", e.cuda_graph_bytes);
  const bool fits = InferenceFits(e, gpu_bytes);
  f.placed = fits ? Verdict::kFits : Verdict::kDoesNotFit;
  if (e.serving && e.serving->requested_bytes > 0) {
    const ServingBudget& s = *e.serving;
    if (!fits) {
      // The engine's own parts: its non-KV bytes and the batch's KV cache (the engine hands the
      // cache only what its budget, gpu memory x utilization, leaves).
      f.parts.clear();
      Part(f.parts, "weights and activations", s.non_kv_bytes);
      Part(f.parts, fmt::format("KV cache of {} sequence(s) of {} tokens", o.batch, o.context_tokens),
           e.total_bytes - std::min(e.total_bytes, s.non_kv_bytes + e.cuda_graph_bytes));
    }
  }
  if (!fits && e.gpus == 1) {
    // How many GPUs of this kind would hold it: tensor parallel over 2, 4, 8.
    for (uint64_t tp : {2, 4, 8}) {
      InferenceOptions wider = o;
      wider.tp = tp;
      auto more = EstimateInference(model, wider);
      if (more && more->gpus == tp && InferenceFits(*more, gpu_bytes)) {
        f.gpus_needed = tp;
        f.gpus_needed_flags = fmt::format("--tp {}", tp);
        break;
      }
    }
    if (!f.gpus_needed) f.no_count_reason = "not with tensor parallelism over up to 8";
  }
  HardwareVerdict v = JudgeHardware(f);
  return v;
}

HardwareVerdict TrainVerdict(const Model& model, const DeviceSpec& gpu, const TrainOptions& o,
                             const TrainEstimate& e) {
  HardwareFacts f;
  f.gpu_label = gpu.label;
  f.gpu_memory_bytes = gpu.memory_bytes;
  f.gpus = std::max<uint64_t>(1, o.gpus);
  f.need_bytes = e.peak_bytes;
  // What is alive at the peak: the peak stage's parts, the CUDA context, the allocator's cache.
  for (const auto& stage : e.stages) {
    if (stage.stage != e.peak_stage) continue;
    for (const auto& p : stage.parts) Part(f.parts, p.name, p.bytes);
  }
  Part(f.parts, "CUDA context", e.cuda_context_bytes);
  Part(f.parts, "allocator reserve", e.allocator_reserve_bytes);
  if (e.peak_bytes > gpu.memory_bytes) {
    // More GPUs: ZeRO-3 shards weights, gradients and optimizer states over them.
    for (uint64_t n = std::max<uint64_t>(2, o.gpus * 2); n <= 64; n *= 2) {
      TrainOptions wider = o;
      wider.gpus = n;
      wider.strategy = Strategy::kZero3;
      auto more = EstimateTraining(model, wider);
      if (more && more->peak_bytes <= gpu.memory_bytes) {
        f.gpus_needed = n;
        f.gpus_needed_flags = fmt::format("--gpus {} --strategy zero3", n);
        break;
      }
    }
    if (!f.gpus_needed) f.no_count_reason = "not with ZeRO-3 over up to 64";
    // The cheapest settings that fit on the GPU given.
    TrainSearchResult found = SearchTrainSetup(o, [&](const TrainSetup& s) -> Result<TrainJudgement> {
      MEMFIT_ASSIGN_OR_RETURN(TrainEstimate t, EstimateTraining(model, s.options));
      return TrainJudgement{t.peak_bytes <= gpu.memory_bytes ? Verdict::kFits : Verdict::kDoesNotFit,
                            t.peak_bytes};
    });
    if (found.setup) {
      f.fix_flags = found.setup->flags;
      f.fix_bytes = found.judgement.need_bytes;
    }
  }
  return JudgeHardware(f);
}

HardwareVerdict FitVerdict(const FitAnswer& a) {
  const FitPlan& p = a.plan;
  const auto& gpus = a.plan_request.gpus;
  HardwareFacts f;
  f.per_gpu = false;
  bool one_kind = true;
  for (const auto& g : gpus) {
    one_kind = one_kind && g.label == gpus.front().label &&
               g.memory_bytes == gpus.front().memory_bytes;
  }
  if (one_kind && !gpus.empty()) {
    f.gpu_label = gpus.front().label;
    f.gpu_memory_bytes = gpus.front().memory_bytes;
    f.gpus = gpus.size();
  } else {
    for (const auto& g : gpus) {
      f.gpu_label += (f.gpu_label.empty() ? "" : " + ") + g.label;
      f.gpu_memory_bytes += g.memory_bytes;
    }
  }
  f.need_bytes = p.total_bytes;
  const bool training = a.runtime.task == "train";
  Part(f.parts, "weights", p.terms.weight_bytes);
  Part(f.parts, "gradients and optimizer states", p.terms.state_bytes);
  Part(f.parts, "KV cache", p.terms.kv_cache_bytes);
  Part(f.parts,
       fmt::format("{} per GPU", training ? "activations and buffers" : "activations and context"),
       p.terms.per_gpu_bytes * p.terms.gpus_used);
  f.placed = p.verdict;
  f.offloaded_bytes = p.map.offloaded_bytes;
  f.unplaced_bytes = p.map.unplaced_bytes;
  f.gpus_needed = p.gpus_needed;
  if (p.gpus_needed && one_kind) f.gpus_needed_flags = fmt::format("--gpus {}", *p.gpus_needed);
  f.no_count_reason = p.no_count_reason;
  if (p.verdict == Verdict::kDoesNotFit) {
    for (const auto& advice : p.advice) {
      if (advice.verdict == Verdict::kFits && !advice.flags.empty()) {
        f.fix_flags = advice.flags;
        f.fix_bytes = advice.total_bytes;
        break;
      }
    }
  }
  return JudgeHardware(f);
}

}  // namespace memfit
