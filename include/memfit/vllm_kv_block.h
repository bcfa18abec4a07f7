#pragma once
// The KV block size vLLM runs a model with on a GPU. Its MLA attention backends force their own
// (vllm/platforms/cuda.py, CudaPlatform.check_and_update_config, v0.11-v0.13): the sparse
// FlashMLA of DSA models (an indexer: DeepSeek-V3.2, GLM-5) 64 tokens; on Blackwell (compute
// capability 10.x) FlashInfer-MLA 64 when qk_nope_head_dim is 128 (32 is kept), else CUTLASS MLA
// 128; on Hopper (9.x) FlashMLA 64. A requested size that is already a multiple is kept; older
// GPUs run Triton MLA with the requested size. Unknown compute capability (0): Hopper's rule.
// Used by the inference estimate and by the deployment planner (which shares one estimate among
// the GPUs that get the same block).

#include <cstdint>
#include <string_view>

#include "memfit/model.h"

namespace memfit {

struct VllmKvBlock {
  uint64_t tokens = 0;           // tokens per block
  std::string_view backend{};    // the MLA backend that forced `tokens`; empty: the request stands
  bool assumed_gpu = false;      // the compute capability is unknown: Hopper's rule applied
  bool operator==(const VllmKvBlock&) const = default;
};

VllmKvBlock VllmKvBlockFor(const Model& model, uint32_t compute_capability, uint64_t requested);

}  // namespace memfit
