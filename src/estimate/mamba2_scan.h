#pragma once
// transformers' torch-path Mamba-2 scan (private to src/estimate): the float32 tensors of
// `torch_forward`'s "ssd naive" chunked scan, which every transformers Mamba-2 mixer runs without
// the mamba_ssm kernels (always on CPU). Derivation and sources: docs/estimates.md, "Mamba-2 in
// transformers without mamba_ssm".

#include <cstdint>
#include <optional>
#include <string>

#include "memfit/model.h"
#include "memfit/runtime_versions.h"

namespace memfit::estimate {

// The scan's dimensions for one Mamba-2 layer: b sequences of T tokens, padded to nc chunks of
// l tokens; h heads (split under TP) of d channels; n = d_state. B and C are repeated from their
// groups to every head before the scan, so the groups do not appear.
struct Mamba2ScanShape {
  uint64_t batch = 0;     // b
  uint64_t chunk = 0;     // l = Hyperparameters::ssm_chunk_size
  uint64_t chunks = 0;    // nc = ceil(T / l)
  uint64_t heads = 0;     // h
  uint64_t head_dim = 0;  // d
  uint64_t d_state = 0;   // n
};

// nullopt unless `info` is a Mamba-2 layer with known heads and d_state. A model without a chunk
// (ssm_chunk_size 0: not read from a config) uses `default_chunk`.
std::optional<Mamba2ScanShape> Mamba2ScanShapeFor(const Model& model, const LayerInfo& info,
                                                  uint64_t batch, uint64_t seq, uint64_t tp,
                                                  uint64_t default_chunk = 256);

struct Mamba2ScanBytes {
  uint64_t g_intermediate = 0;  // C x B before the sum over d_state: b nc l l h n float32
  uint64_t largest_other = 0;   // the largest of the other 6-D float32 products
  uint64_t locals = 0;          // the chunk-sized float32 locals alive until the scan returns
  uint64_t forward_peak = 0;    // g_intermediate + largest_other + locals
  uint64_t saved = 0;           // what autograd keeps for backward (training)
  uint64_t backward_peak = 0;   // G_intermediate's MulBackward0: both factors' 6-D gradients
  bool operator==(const Mamba2ScanBytes&) const = default;
};

// Saturating (UINT64_MAX on overflow).
Mamba2ScanBytes Mamba2TorchScanBytes(const Mamba2ScanShape& s);

// The assumption line of a model with Mamba-2 layers: the path taken and what the torch path
// costs beyond the kernels' (`torch_extra_bytes`, at the estimate's peak).
std::string Mamba2ScanAssumption(Mamba2Scan scan, uint64_t chunk, uint64_t torch_extra_bytes);

}  // namespace memfit::estimate
