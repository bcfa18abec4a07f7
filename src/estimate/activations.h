#pragma once
// Per-layer model of the tensors autograd saves for backward, per implementation (private to
// src/estimate). docs/estimates.md, "Training activations".

#include <cstdint>
#include <string>
#include <vector>

#include "memfit/estimate_train.h"
#include "memfit/model.h"

namespace memfit::estimate {

// What the saved-tensor model needs to know about one layer's trainable linears.
struct LayerTraining {
  bool trainable = true;        // full / freeze: this layer's weights train
  // Modules (last path component, e.g. "q_proj") whose input is saved: trainable linears,
  // LoRA targets (plus the r-wide A output), quantized linears (bnb keeps the input).
  std::vector<std::string> lora_modules;   // LoRA adapters in this layer
  std::vector<uint64_t> lora_in_dims;      // their input widths
  bool save_all_linear_inputs = true;      // full fine-tuning, or bnb 4-bit base layers
};

struct ActivationParams {
  uint64_t batch = 1;
  uint64_t seq = 1;
  uint32_t compute_bytes = 2;   // matmul outputs (2 under autocast or bf16, 4 in fp32)
  uint32_t stream_bytes = 2;    // residual stream (4 in fp32 and in HF AMP with fp32 params)
  bool autocast = false;        // HF AMP: every op casts its inputs (a copy per consumer)
  AttnImpl attn = AttnImpl::kSdpa;
  double hidden_dropout = 0.0;
  double attention_dropout = 0.0;
  uint64_t lora_rank = 0;
  double lora_dropout = 0.0;
  uint64_t tp = 1;
  // Dropout masks in the dtype of the dropout's input (torch's CPU dropout) instead of CUDA's
  // 1-byte bool mask (ComputeDevice in memfit/estimate_train.h).
  bool dropout_mask_in_input_dtype = false;
};

struct LayerActivation {
  uint64_t saved_bytes = 0;      // kept from forward to backward without checkpointing
  uint64_t selective_bytes = 0;  // with the attention core recomputed
  uint64_t input_bytes = 0;      // the layer input (all that full checkpointing keeps)
  uint64_t eager_scores_bytes = 0;  // the s^2 part (0 unless eager)
};

// Saved bytes of decoder layer `info` for the batch x seq tokens.
LayerActivation LayerSavedBytes(const Model& model, const LayerInfo& info, const LayerTraining& lt,
                                const ActivationParams& p);

}  // namespace memfit::estimate
