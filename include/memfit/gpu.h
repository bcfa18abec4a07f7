#pragma once
// memfit's built-in accelerator catalog (NVIDIA, AMD, Apple, Intel) and `--gpu` argument parsing.
// Figures are the vendors' published specifications; each entry names its source. See
// docs/estimates.md, "Fit planner", for how memory sizes are read.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/result.h"

namespace memfit {

enum class GpuVendor : uint8_t { kNvidia, kAmd, kApple, kIntel };
std::string_view GpuVendorName(GpuVendor vendor);  // "nvidia", "amd", "apple", "intel"
Result<GpuVendor> ParseGpuVendor(std::string_view name);

struct GpuSpec {
  std::string_view name;     // display name, e.g. "H100 SXM"
  GpuVendor vendor = GpuVendor::kNvidia;
  std::string_view aliases{};  // extra names, separated by '|': "h100|h100 80gb"
  // Memory in the vendor's "GB". HBM and GDDR chips come in binary sizes, so the vendor's "80 GB"
  // is 80 GiB of physical memory (nvidia-smi shows slightly less: ECC and driver reserve); Apple's
  // unified memory is likewise binary. MemoryBytes() = memory_gb x 2^30.
  uint32_t memory_gb = 0;
  double bandwidth_gb_s = 0;  // peak memory bandwidth, decimal GB/s as published
  // Dense (no 2:4 sparsity) BF16 tensor TFLOPS with FP32 accumulate; FP16 where the chip has no
  // BF16 (V100, T4, Turing). 0 when no figure is published or derivable.
  double tensor_tflops = 0;
  bool unified_memory = false;  // CPU and GPU share this memory (Apple, GH200 aside, MI300A, Spark)
  std::string_view memory_type;  // "HBM3", "GDDR6X", "LPDDR5X", ...
  std::string_view source;       // vendor document, and how a figure was derived if it was
};

uint64_t MemoryBytes(const GpuSpec& gpu);

// CUDA compute capability, major x 10 + minor (90 for H100, 89 for L40S/RTX 4090, 80 for A100),
// from NVIDIA's "CUDA GPUs - Compute Capability" table; 0 for other vendors. Decides whether an
// engine runs a checkpoint's FP8/MXFP4/NVFP4 weights as stored (memfit/stored_format.h).
uint32_t ComputeCapability(const GpuSpec& gpu);

std::span<const GpuSpec> GpuCatalog();

// Tolerant lookup: case, spaces, '-', '_' and vendor/brand words ("nvidia", "geforce", "radeon",
// "instinct", "apple", "intel", "arc") are ignored, so "rtx4090", "H100 SXM", "a100-80gb" and
// "NVIDIA GeForce RTX 4090" all work. An unambiguous prefix also matches ("mi300" is ambiguous).
// Errors list the candidates.
Result<const GpuSpec*> FindGpu(std::string_view name);

// One device the user described with --gpu: a catalog name or a size ("24GiB").
struct DeviceSpec {
  std::string label;           // "RTX 4090" or "24.00 GiB GPU"
  uint64_t memory_bytes = 0;
  const GpuSpec* gpu = nullptr;  // null for a bare size (no bandwidth or TFLOPS known)
};
// A catalog name or a byte size; "2xH100" / "4x rtx4090" repeat a device. Appends to `out`. A
// bare number ("4090") is refused with the catalog GPU of that name as a suggestion; a size in
// GB or TB is read in binary units, as vendors label cards (24GB = 24 GiB; the label says so).
Status ParseDeviceArg(std::string_view text, std::vector<DeviceSpec>& out);

// --gpu's word as one kind of device and how many: "8xh200" -> (H200, 8), "rtx4090" -> (RTX
// 4090, 1), "24GiB" -> (a 24 GiB GPU, 1). The count form works in every command.
struct GpuChoice {
  DeviceSpec device;
  uint64_t count = 1;
};
Result<GpuChoice> ParseGpuChoice(std::string_view text);

}  // namespace memfit
