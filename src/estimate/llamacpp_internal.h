#pragma once
// Pieces of the llama.cpp estimate (private to src/estimate).

#include <cstdint>
#include <vector>

#include "memfit/checked_math.h"
#include "memfit/llamacpp.h"

namespace memfit::llamacpp {

// x rounded up to a multiple of n; x must be at most 2^64 - n (callers bound it first).
inline uint64_t Pad(uint64_t x, uint64_t n) { return (x + n - 1) / n * n; }

// Where each repeating layer (0..n_layer-1) and the output layer (index n_layer) live:
// -1 = host, else a GPU index.
struct Placement {
  std::vector<int> layer_device;  // size n_layer + 1
  int output_device = -1;
  uint32_t offloaded = 0;         // layers (of n_layer + 1) on a GPU
};
Placement PlaceLayers(uint64_t n_layer, const LlamaCppOptions& options, uint32_t num_gpus);

// The device of tensor `name` (-1 host), given the placement and --n-cpu-moe.
int TensorDevice(const Tensor& tensor, const Placement& placement, const LlamaCppOptions& options);

// Bytes the CUDA backend allocates for a tensor: quantized rows padded to a multiple of 512
// elements (MATRIX_ROW_PADDING, ggml-cuda.cu get_alloc_size), then 128-byte aligned.
// Overflowed for tensors within 2^10 bytes of 2^64.
CheckedU64 CudaAllocBytes(const Tensor& tensor);

// Per-layer KV/RS bytes (index = layer), and the cache geometry.
struct KvLayout {
  uint64_t n_ctx = 0, n_ctx_seq = 0, streams = 1, cells_full = 0, cells_swa = 0;
  std::vector<uint64_t> k_bytes, v_bytes, rs_bytes;
};
Result<KvLayout> ComputeKv(const Model& model, const LlamaCppOptions& options, uint32_t n_seq,
                           uint64_t n_ctx_requested, uint64_t n_ubatch, bool flash_attn);

// Compute buffers per GPU and for the host (see docs/estimates.md "compute buffer model").
struct ComputeInputs {
  const Model* model = nullptr;
  const Placement* placement = nullptr;
  const KvLayout* kv = nullptr;
  uint32_t num_gpus = 0;
  uint64_t n_ubatch = 0;
  uint32_t n_seq = 1;
  bool flash_attn = false;
  const LlamaCppOptions* options = nullptr;
  std::vector<uint64_t> host_layer_weight_peak;  // per layer: largest group op-offloaded
  uint64_t host_output_weight = 0;               // output matrix bytes when it stays on the host
};
struct ComputeBytes {
  std::vector<uint64_t> gpu;
  uint64_t host = 0;
};
// An error when a buffer size overflows 64 bits.
Result<ComputeBytes> ComputeBuffers(const ComputeInputs& in);

}  // namespace memfit::llamacpp
