#pragma once
// The verdict of every command that is given hardware (`inference --gpu`, `train --gpu`, `fit`):
// fits / fits with offload / does not fit, on which GPUs, how many of that GPU would hold it,
// and, when it does not fit, which part is too big. One function (JudgeHardware) decides it from
// the figures the command computed; the renderers only print its line and its JSON object
// (docs/json.md, "verdict").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memfit/fit.h"

namespace memfit {

// One part of the memory a command needs ("weights", "KV cache", ...), in bytes.
struct MemoryPart {
  std::string name;
  uint64_t bytes = 0;
};

// What the command computed, in its own terms.
struct HardwareFacts {
  std::string gpu_label;          // "RTX 4090" or "24.00 GiB GPU"
  uint64_t gpu_memory_bytes = 0;  // one GPU's memory, as the catalog (or --gpu SIZE) gives it
  uint64_t gpus = 1;              // GPUs given
  // true: need_bytes and parts are per GPU (inference, train: every GPU holds the same share);
  // false: totals over the GPUs given (the device-map fit).
  bool per_gpu = true;
  uint64_t need_bytes = 0;
  std::vector<MemoryPart> parts{};  // what need_bytes is made of (zero parts are ignored)
  // The device-map fit decides the verdict by placing modules: its verdict, and what was
  // offloaded (fits with offload) or could not be placed. nullopt: need_bytes against memory.
  std::optional<Verdict> placed{};
  uint64_t offloaded_bytes = 0;
  uint64_t unplaced_bytes = 0;
  // The fewest GPUs of this kind that hold it with the flags that spread it ("--tp 4"); nullopt
  // when unknown or none does, then `no_count_reason` says why ("the runtime per GPU, 49.68 GiB,
  // exceeds one RTX 4090").
  std::optional<uint64_t> gpus_needed{};
  std::string gpus_needed_flags{};
  std::string no_count_reason{};
  // A change of settings that fits on the GPUs given (the advice's best), as flags, with its need.
  std::string fix_flags{};
  uint64_t fix_bytes = 0;
};

// The verdict, with the facts it was judged on (`gpus` at least 1).
struct HardwareVerdict : HardwareFacts {
  Verdict verdict = Verdict::kDoesNotFit;
  std::string reason{};  // does not fit: which part is too big (never empty then)
  std::string line{};    // the first line of the command's table output
};

HardwareVerdict JudgeHardware(const HardwareFacts& facts);

}  // namespace memfit
