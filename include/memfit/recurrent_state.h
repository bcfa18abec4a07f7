#pragma once
// The fixed per-sequence state of recurrent layers (Mamba, Mamba2, gated delta-net, Kimi delta
// attention, short convolutions, linear attention), shared by the transformers/vLLM/SGLang
// estimate (kv_cache.cc) and the llama.cpp one (llamacpp_kv.cc). docs/estimates.md, "Recurrent
// state".

#include <cstdint>

#include "memfit/checked_math.h"
#include "memfit/model.h"

namespace memfit {

struct RecurrentElements {
  CheckedU64 conv;       // conv_steps x conv channels
  CheckedU64 recurrent;  // heads x elements per head (SSM / delta-rule state)
};

// Elements of one layer's state for one sequence on one of `tp` GPUs (channels and heads split,
// rounded up). `conv_steps` is what the engine keeps of the conv window: conv_kernel - 1 in
// llama.cpp (n_embd_r) and vLLM (MambaStateShapeCalculator), conv_kernel in transformers.
RecurrentElements RecurrentStateElements(const RecurrentState& state, uint64_t conv_steps,
                                         uint64_t tp = 1);

// The state of a Mamba / Mamba2 / short-conv layer from llama.cpp's hyperparameters (GGUF
// ssm.conv_kernel, ssm.inner_size, ssm.state_size, ssm.group_count, shortconv.l_cache):
// n_embd_r = (d_conv - 1) x (d_inner + 2 n_group d_state), n_embd_s = d_state x d_inner
// (src/llama-hparams.cpp).
RecurrentState RecurrentStateFromGguf(const Hyperparameters& hp);

}  // namespace memfit
