#pragma once
// Device maps with accelerate's semantics: `infer_auto_device_map` (and transformers'
// `device_map="auto"`, which first balances max_memory with `get_balanced_memory`). Whole
// indivisible blocks go to the GPUs in order, then to the CPU, then to disk; the largest remaining
// block is kept free on the first GPU and on the CPU, so an offloaded block can be brought back to
// run. Pure functions; the algorithm and memfit's deviations are in docs/estimates.md.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>


#include "memfit/model.h"

namespace memfit {

// accelerate's max_memory: bytes usable for weights on each device.
struct MemoryBudget {
  std::vector<uint64_t> gpu_bytes;      // GPU i -> max_memory[i]
  std::optional<uint64_t> cpu_bytes{};  // max_memory["cpu"]; nullopt: no CPU offload
  // Disk offload. accelerate always allows unlimited disk; memfit allows it only when asked, so
  // that "does not fit" exists: nullopt = no disk, UINT64_MAX = unlimited.
  std::optional<uint64_t> disk_bytes{};
};

enum class DeviceMapStrategy : uint8_t {
  kSequential,  // infer_auto_device_map(max_memory) as given (device_map="sequential")
  kBalanced,    // get_balanced_memory first (transformers device_map="auto" / "balanced")
};

struct DeviceMapOptions {
  DeviceMapStrategy strategy = DeviceMapStrategy::kSequential;
  // Bytes of one tensor as loaded (the chosen dtype); empty: Tensor::bytes. Tied tensors always
  // count once (accelerate's named_parameters de-duplicates them).
  std::function<uint64_t(const Tensor&)> size_of{};
  // Extra bytes that travel with a module matching a no-split pattern (a decoder layer's KV cache
  // or optimizer states): added to that block and its ancestors. Empty: none.
  std::function<uint64_t(std::string_view module)> extra_block_bytes{};
  // accelerate keeps the largest remaining block free on the first GPU and on the CPU. false: pack
  // the GPUs to their max_memory (what an explicit device_map, or .to(), can use).
  bool keep_largest_free = true;
  // false: only usage, totals and verdict inputs; no module names per device and no cleaned
  // `entries` (the planner's what-ifs need the numbers, not the map).
  bool record_modules = true;
};

enum class DeviceKind : uint8_t { kGpu, kCpu, kDisk };

struct DeviceUsage {
  DeviceKind kind = DeviceKind::kGpu;
  int index = 0;                  // GPU id (0 for cpu/disk)
  uint64_t max_memory = 0;        // after balancing (what infer_auto_device_map was given)
  uint64_t used_bytes = 0;        // blocks placed here
  uint64_t reserved_bytes = 0;    // kept free for an offloaded block (first GPU, CPU)
  std::vector<std::string> modules{};  // placed modules, in order (uncleaned)
};
std::string DeviceName(const DeviceUsage& device);  // "0", "cpu", "disk"

struct DeviceMap {
  // The cleaned device map (accelerate clean_device_map), in placement order: module -> device
  // ("0", "1", "cpu", "disk").
  std::vector<std::pair<std::string, std::string>> entries;
  std::vector<DeviceUsage> devices;     // every device offered, in order
  std::vector<std::string> unplaced;    // blocks no device could take (no disk allowed)
  uint64_t unplaced_bytes = 0;
  uint64_t total_bytes = 0;             // module_sizes[""]
  uint64_t largest_block_bytes = 0;     // at the start (get_max_layer_size)
  std::vector<std::string> largest_block_names;
  uint64_t offloaded_bytes = 0;         // placed on cpu or disk
  // Buffers of offloaded modules: accelerate keeps them on the GPU (offload_buffers=False), so
  // they use GPU memory the map does not show.
  uint64_t offloaded_buffer_bytes = 0;
  bool fits_on_gpus() const { return unplaced.empty() && offloaded_bytes == 0; }
};

DeviceMap InferDeviceMap(const Model& model, const MemoryBudget& budget,
                         const DeviceMapOptions& options = {});

}  // namespace memfit
