// One verdict for every command given hardware (memfit/verdict.h). The words are chosen here
// once, so `inference`, `train` and `fit` say the same thing the same way.

#include "memfit/verdict.h"

#include <algorithm>

#include "memfit/units.h"

namespace memfit {
namespace {

// Which parts are too big: the largest parts, largest first, until together they exceed the
// memory they must fit in ("weights 56.87 GiB alone exceeds ..." or "activations 30.00 GiB +
// weights 14.96 GiB exceed ...").
std::string TooBig(std::vector<MemoryPart> parts, uint64_t capacity, const std::string& where) {
  std::erase_if(parts, [](const MemoryPart& p) { return p.bytes == 0; });
  std::stable_sort(parts.begin(), parts.end(),
                   [](const MemoryPart& a, const MemoryPart& b) { return a.bytes > b.bytes; });
  std::string names;
  uint64_t sum = 0;
  size_t used = 0;
  for (const auto& p : parts) {
    names += fmt::format("{}{} {}", names.empty() ? "" : " + ", p.name, FormatBytes(p.bytes));
    sum = sum > UINT64_MAX - p.bytes ? UINT64_MAX : sum + p.bytes;
    ++used;
    if (sum > capacity) break;
  }
  if (used == 0) return "";
  if (sum <= capacity) return fmt::format("largest parts: {}", names);
  return fmt::format("{} {} {}", names, used == 1 ? "alone exceeds" : "exceed", where);
}

}  // namespace

HardwareVerdict JudgeHardware(const HardwareFacts& f) {
  HardwareVerdict v;
  static_cast<HardwareFacts&>(v) = f;
  v.gpus = std::max<uint64_t>(1, f.gpus);
  const uint64_t capacity =
      f.per_gpu ? f.gpu_memory_bytes
                : (v.gpus > UINT64_MAX / std::max<uint64_t>(1, f.gpu_memory_bytes)
                       ? UINT64_MAX
                       : v.gpus * f.gpu_memory_bytes);
  if (f.placed) v.verdict = *f.placed;
  else v.verdict = f.need_bytes <= capacity ? Verdict::kFits : Verdict::kDoesNotFit;

  const std::string on = fmt::format("{} x {}", v.gpus, f.gpu_label);
  const std::string need =
      f.per_gpu ? fmt::format("needs {} per GPU, one {} has {}", FormatBytes(f.need_bytes),
                              f.gpu_label, FormatBytes(f.gpu_memory_bytes))
                : fmt::format("needs {}, {} {} {}", FormatBytes(f.need_bytes), on,
                              v.gpus == 1 ? "has" : "have", FormatBytes(capacity));
  switch (v.verdict) {
    case Verdict::kFits:
      v.line = fmt::format("fits on {}: {}", on, need);
      return v;
    case Verdict::kFitsWithOffload:
      v.line = fmt::format("fits with offload on {}: {} offloaded to CPU RAM or disk ({} in all)",
                           on, FormatBytes(f.offloaded_bytes), FormatBytes(f.need_bytes));
      return v;
    case Verdict::kDoesNotFit: break;
  }
  const std::string where = f.per_gpu ? "one GPU" : (v.gpus == 1 ? "the GPU" : "the GPUs");
  v.reason = TooBig(f.parts, capacity, where);
  if (f.unplaced_bytes > 0) {
    v.reason = fmt::format("{} could not be placed{}{}", FormatBytes(f.unplaced_bytes),
                           v.reason.empty() ? "" : "; ", v.reason);
  }
  if (v.reason.empty()) {
    v.reason = fmt::format("{} is more than {} {}", FormatBytes(f.need_bytes),
                           f.per_gpu ? "one GPU's" : "the GPUs'", FormatBytes(capacity));
  }
  v.line = fmt::format("does not fit on {}: {} ({})", on, need, v.reason);
  if (f.gpus_needed && *f.gpus_needed > v.gpus) {
    v.line += fmt::format("; {} x {} would fit{}{}", *f.gpus_needed, f.gpu_label,
                          f.gpus_needed_flags.empty() ? "" : " with ", f.gpus_needed_flags);
  } else if (!f.no_count_reason.empty()) {
    v.line += fmt::format("; no number of {} holds it: {}", f.gpu_label, f.no_count_reason);
  }
  if (!f.fix_flags.empty()) {
    v.line += fmt::format("; fits with {} ({})", f.fix_flags, FormatBytes(f.fix_bytes));
  }
  return v;
}

}  // namespace memfit
