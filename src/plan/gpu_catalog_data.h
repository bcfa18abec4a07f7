#pragma once
// The raw accelerator table behind GpuCatalog() (memfit/gpu.h).

#include <span>
#include <string_view>

#include "memfit/gpu.h"

namespace memfit::plan {

std::span<const GpuSpec> GpuTable();
// 0 when the name has no row (non-NVIDIA devices).
uint32_t TableComputeCapability(std::string_view name);

}  // namespace memfit::plan
