#pragma once
// The Mamba-1 mixer (selective SSM) shared by mamba, falcon_mamba and jamba: its tensors and the
// LayerInfo of its cached state. transformers builds it three times with one layout:
// - in_proj [2 x d_inner, H] (bias with "use_bias" / "mamba_proj_bias"); depthwise conv1d
//   [d_inner, 1, kernel] (+ bias with "use_conv_bias" / "mamba_conv_bias");
// - x_proj [dt_rank + 2 x d_state, d_inner] (no bias); dt_proj [d_inner, dt_rank] + bias;
// - A_log [d_inner, d_state], D [d_inner]; out_proj [H, d_inner] (bias as in_proj).
// The families differ only in what normalizes dt, B and C (Mamba1Norms).
// Sources: transformers models/mamba/modeling_mamba.py (MambaMixer.__init__),
// models/falcon_mamba/modular_falcon_mamba.py (FalconMambaMixer.__init__),
// models/jamba/modular_jamba.py (JambaMambaMixer.__init__).

#include <cstdint>
#include <string>
#include <string_view>

#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

enum class Mamba1Norms : uint8_t {
  kNone,           // MambaMixer: dt, B and C are views of x_proj's output
  kFalconBuffers,  // FalconMambaMixer: parameter-free rms_forward, plus the kernels' all-ones
                   // weights b_c_rms [d_state] and dt_rms [d_inner] as non-persistent buffers
  kJamba,          // JambaMambaMixer: dt_layernorm [dt_rank], b_layernorm, c_layernorm [d_state]
};

struct Mamba1Dims {
  uint64_t d_inner = 0, d_state = 0, kernel = 0, dt_rank = 0;
  bool conv_bias = true, proj_bias = false;
  Mamba1Norms norms = Mamba1Norms::kNone;
};

// The rank of dt_proj from `key` ("time_step_rank", Jamba "mamba_dt_rank"): an integer, or
// "auto" / absent = ceil(hidden / 16) as MambaConfig and JambaConfig compute it.
uint64_t ReadTimeStepRank(ModelBuilder& b, const HfConfig& c, std::string_view key, uint64_t h);

// Checks that every dimension is positive and sane (errors name `keys`, the config's names for
// d_inner, d_state, kernel and rank) and records the ssm_* hyperparameters in b.model().hp.
Status ResolveMamba1(ModelBuilder& b, const HfConfig& c, const Mamba1Dims& d,
                     std::string_view keys);

// Emits the mixer's tensors under `prefix` (e.g. "backbone.layers.0.mixer") and returns the
// layer's LayerInfo: no attention, a Mamba-1 state of d_inner conv channels x kernel and d_inner
// rows of d_state (transformers keeps it in the model dtype: kv_cache.cc).
LayerInfo EmitMamba1(ModelBuilder& b, const Quantization& q, const std::string& prefix, uint64_t h,
                     const Mamba1Dims& d);

}  // namespace memfit::arch
