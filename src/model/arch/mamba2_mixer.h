#pragma once
// The Mamba-2 mixer of transformers' BambaMixer, shared by the hybrid decoders that use it
// (bamba, granitemoehybrid, falcon_h1): its config keys, its tensors and the LayerInfo of its
// cached state. Falcon-H1's FalconH1Mixer is the same mixer with three options (Mamba2Dims
// d_ssm, gated_norm, out_bias): transformers models/falcon_h1/modular_falcon_h1.py.
// - mamba.in_proj [d_inner + conv_dim + heads, H] (d_inner = mamba_expand x H = mamba_n_heads x
//   mamba_d_head, conv_dim = d_inner + 2 x mamba_n_groups x mamba_d_state);
// - depthwise mamba.conv1d [conv_dim, 1, mamba_d_conv] (+ bias with mamba_conv_bias);
// - dt_bias, A_log and D [heads]; a gated RMSNorm mamba.norm [d_inner]; out_proj [H, d_inner];
//   in/out biases with mamba_proj_bias.
// Source: transformers models/bamba/{configuration,modeling}_bamba.py (BambaConfig's defaults and
// derived mamba_d_head "auto", BambaMixer.__init__).

#include <string>

#include "model/arch/builder_kit.h"
#include "model/arch/quantization.h"

namespace memfit::arch {

struct Mamba2Dims {
  uint64_t heads = 0, head_dim = 0, groups = 0, d_state = 0, kernel = 0, expand = 0;
  uint64_t d_inner = 0, conv = 0;  // derived by ResolveMamba2
  bool conv_bias = true, proj_bias = false;
  // Falcon-H1: "mamba_d_ssm", the inner size when non-zero (else mamba_expand x H).
  uint64_t d_ssm = 0;
  // The gated RMSNorm mamba.norm [d_inner] (Falcon-H1: only with "mamba_rms_norm").
  bool gated_norm = true;
  // out_proj's bias: mamba_proj_bias (ReadMamba2 sets it); Falcon-H1: "projectors_bias".
  bool out_bias = false;
};

// Reads the mamba_* keys with BambaConfig's defaults (n_heads 128, n_groups 1, d_state 256,
// d_conv 4, expand 2, conv_bias true, proj_bias false; out_bias = proj_bias). Errors go to `b`.
Mamba2Dims ReadMamba2(ModelBuilder& b, const HfConfig& c);

// Validates `d` against hidden size `h`, derives d_inner (d_ssm, else expand x h), mamba_d_head ("auto" or absent:
// d_inner / heads, which must divide) and conv_dim, and records the ssm_* hyperparameters in
// b.model().hp. Call it only when the model has a Mamba layer.
Status ResolveMamba2(ModelBuilder& b, const HfConfig& c, uint64_t h, Mamba2Dims& d);

// Emits the mixer's tensors under `prefix` (e.g. "model.layers.0.mamba") and returns the layer's
// LayerInfo: no attention, a Mamba-2 recurrent state of conv_dim x (kernel) conv channels and
// heads x (head_dim x d_state) SSM elements.
LayerInfo EmitMamba2(ModelBuilder& b, const Quantization& q, const std::string& prefix, uint64_t h,
                     const Mamba2Dims& d);

}  // namespace memfit::arch
