#pragma once
// The raw accelerator table behind GpuCatalog() (memfit/gpu.h).

#include <span>
#include <string_view>

#include "memfit/gpu.h"

namespace memfit::plan {

std::span<const GpuSpec> GpuTable();

}  // namespace memfit::plan
