// Training advice that searches (memfit/train_search.h). The costs are the ranking stated in
// docs/estimates.md, "Training advice": speed-only changes first, then small quality costs.

#include "memfit/train_search.h"

#include <algorithm>

namespace memfit {
namespace {

// One value of one dimension: how it sets the options, its cost, its words and flags.
struct Choice {
  int cost = 0;     // to quality and speed together: the ranking
  int quality = 0;  // to quality alone (QualityCostName)
  std::string change;  // "" for the base's own value
  std::string flags;
  std::function<void(TrainOptions&)> apply;
};

std::vector<Choice> Methods(const TrainOptions& base) {
  std::vector<Choice> out{{}};
  if (base.method == TrainMethod::kFull) {
    out.push_back({2, 2, "LoRA adapters instead of full fine-tuning", "--method lora",
                   [](TrainOptions& o) { o.method = TrainMethod::kLora; }});
  }
  if (base.method == TrainMethod::kFull || base.method == TrainMethod::kLora) {
    out.push_back({base.method == TrainMethod::kLora ? 1 : 3, 2, "QLoRA (LoRA over an NF4 base)",
                   "--method qlora", [](TrainOptions& o) { o.method = TrainMethod::kQlora; }});
  }
  return out;
}

std::vector<Choice> Checkpointings(const TrainOptions& base) {
  std::vector<Choice> out{{}};
  if (base.checkpointing != Checkpointing::kFull) {
    out.push_back({1, 0, "gradient checkpointing", "--checkpointing full",
                   [](TrainOptions& o) { o.checkpointing = Checkpointing::kFull; }});
  }
  return out;
}

// 8-bit states; the paged variants are counted on the GPU (they page only under pressure), so
// they change no verdict and are not offered.
std::vector<Choice> Optimizers(const TrainOptions& base) {
  std::vector<Choice> out{{}};
  if (base.optimizer == Optimizer::kAdamW || base.optimizer == Optimizer::kAdam) {
    out.push_back({1, 1, "8-bit AdamW (bitsandbytes)", "--optimizer adamw-8bit",
                   [](TrainOptions& o) { o.optimizer = Optimizer::kAdamW8bit; }});
  } else if (base.optimizer == Optimizer::kPagedAdamW) {
    out.push_back({1, 1, "paged 8-bit AdamW (bitsandbytes)", "--optimizer paged-adamw-8bit",
                   [](TrainOptions& o) { o.optimizer = Optimizer::kPagedAdamW8bit; }});
  }
  return out;
}

std::vector<Choice> Precisions(const TrainOptions& base) {
  std::vector<Choice> out{{}};
  if (base.precision != Precision::kBf16) {
    out.push_back({2, 2, "pure bf16 weights (no fp32 master copy)", "--precision bf16",
                   [](TrainOptions& o) { o.precision = Precision::kBf16; }});
  }
  return out;
}

// Smaller micro-batches, the effective batch (batch x grad-accum) kept.
std::vector<Choice> Batches(const TrainOptions& base) {
  std::vector<Choice> out{{}};
  for (uint64_t b = base.batch / 2, f = 2; b >= 1; b /= 2, f *= 2) {
    const uint64_t accum = base.grad_accum * f;
    out.push_back({1, 0, fmt::format("micro-batch {} with {} gradient-accumulation steps", b, accum),
                   fmt::format("--batch {} --grad-accum {}", b, accum),
                   [b, accum](TrainOptions& o) { o.batch = b; o.grad_accum = accum; }});
  }
  return out;
}

std::vector<Choice> Offloads(const TrainOptions& base) {
  std::vector<Choice> out{{}};
  if (base.offload != Offload::kNone) return out;
  const bool needs_zero = base.strategy == Strategy::kDdp;
  out.push_back({3, 0, "optimizer states in CPU RAM (ZeRO-Offload)",
                 needs_zero ? "--strategy zero2 --offload optimizer" : "--offload optimizer",
                 [needs_zero](TrainOptions& o) {
                   if (needs_zero) o.strategy = Strategy::kZero2;
                   o.offload = Offload::kOptimizer;
                 }});
  return out;
}

}  // namespace

std::vector<TrainSetup> TrainSetupCandidates(const TrainOptions& base) {
  const std::vector<std::vector<Choice>> dims = {Methods(base), Checkpointings(base),
                                                 Optimizers(base), Precisions(base),
                                                 Batches(base), Offloads(base)};
  std::vector<TrainSetup> out;
  std::vector<size_t> at(dims.size(), 0);
  while (true) {
    TrainSetup s{.options = base};
    for (size_t d = 0; d < dims.size(); ++d) {
      const Choice& c = dims[d][at[d]];
      if (!c.apply) continue;
      c.apply(s.options);
      s.cost += c.cost;
      s.quality_cost = std::max(s.quality_cost, c.quality);
      s.changes.push_back(c.change);
      s.flags += (s.flags.empty() ? "" : " ") + c.flags;
    }
    if (!s.changes.empty()) out.push_back(std::move(s));
    size_t d = 0;
    while (d < dims.size() && ++at[d] == dims[d].size()) at[d++] = 0;
    if (d == dims.size()) break;
  }
  std::stable_sort(out.begin(), out.end(), [](const TrainSetup& a, const TrainSetup& b) {
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.changes.size() != b.changes.size()) return a.changes.size() < b.changes.size();
    return a.options.batch > b.options.batch;
  });
  return out;
}

TrainSearchResult SearchTrainSetup(const TrainOptions& base, const TrainJudge& judge) {
  TrainSearchResult result;
  for (auto& setup : TrainSetupCandidates(base)) {
    ++result.tried;
    auto judged = judge(setup);
    if (!judged || judged->verdict != Verdict::kFits) continue;
    result.setup = std::move(setup);
    result.judgement = *judged;
    break;
  }
  return result;
}

}  // namespace memfit
