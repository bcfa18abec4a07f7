#pragma once
// transformers' torch-path Mamba-1 selective scan (private to src/estimate): `slow_forward` of
// JambaMambaMixer, MambaMixer and FalconMambaMixer, which transformers runs without the
// mamba_ssm kernels (always on CPU). Derivation and sources: docs/estimates.md, "Mamba-1 in
// transformers without mamba_ssm".

#include <cstdint>
#include <optional>
#include <string>

#include "memfit/model.h"
#include "memfit/runtime_versions.h"

namespace memfit::estimate {

// One Mamba-1 layer's scan over b sequences of T tokens: d channels (d_inner, split under TP),
// n = d_state, r = the time-step rank.
struct Mamba1ScanShape {
  uint64_t batch = 0;     // b
  uint64_t seq = 0;       // T
  uint64_t channels = 0;  // d
  uint64_t d_state = 0;   // n
  uint64_t dt_rank = 0;   // r
  bool normed_ssm_parameters = false;  // Jamba, Falcon-Mamba: dt, B and C RMS-normed copies
};

// nullopt unless `info` is a Mamba-1 layer with known channels and d_state. The time-step rank is
// the configs' "auto" default, ceil(hidden / 16) (JambaConfig "mamba_dt_rank", MambaConfig and
// FalconMambaConfig "time_step_rank"): the terms it sizes are (r + 2n)-wide, small beside d.
std::optional<Mamba1ScanShape> Mamba1ScanShapeFor(const Model& model, const LayerInfo& info,
                                                  uint64_t batch, uint64_t seq, uint64_t tp);

struct Mamba1ScanBytes {
  uint64_t float32_products = 0;  // discrete_A, discrete_B, deltaB_u: 3 x b T d n float32
  uint64_t locals = 0;            // the model-dtype locals alive at the gated output
  uint64_t forward_peak = 0;      // float32_products + locals
};

// `c`: the model dtype's bytes per element. Saturating (UINT64_MAX on overflow).
Mamba1ScanBytes Mamba1TorchScanBytes(const Mamba1ScanShape& s, uint64_t c);

// The assumption line of a model with Mamba-1 layers (and no Mamba-2 ones): the path taken and
// what the torch path costs beyond the kernels' (`torch_extra_bytes`, at the estimate's peak).
std::string Mamba1ScanAssumption(Mamba2Scan scan, uint64_t torch_extra_bytes);

}  // namespace memfit::estimate
