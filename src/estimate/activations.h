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
  // Modules (last path component, e.g. "q_proj") whose input is saved: trainable linears and
  // LoRA targets (plus the r-wide A output); bitsandbytes' 4-bit linears keep none (>= 0.43.2).
  std::vector<std::string> lora_modules;   // LoRA adapters in this layer
  std::vector<uint64_t> lora_in_dims;      // their input widths
  bool save_all_linear_inputs = true;      // full fine-tuning and freeze
};

struct ActivationParams {
  uint64_t batch = 1;
  uint64_t seq = 1;              // this layer's tokens per sequence (a decoder's: the targets)
  // Encoder tokens per sequence that a cross-attention layer (LayerInfo::cross_attention)
  // attends to; 0: no cross-attention block is counted.
  uint64_t cross_seq = 0;
  uint32_t compute_bytes = 2;   // matmul outputs (2 under autocast or bf16, 4 in fp32)
  uint32_t stream_bytes = 2;    // residual stream (4 in fp32 and in HF AMP with fp32 params)
  bool autocast = false;        // HF AMP: every op casts its inputs (a copy per consumer)
  AttnImpl attn = AttnImpl::kSdpa;
  double hidden_dropout = 0.0;
  double attention_dropout = 0.0;
  double activation_dropout = 0.0;  // inside the MLP, on the activation's output (T5)
  uint64_t lora_rank = 0;
  double lora_dropout = 0.0;
  uint64_t tp = 1;
  // Dropout masks in the dtype of the dropout's input (torch's CPU dropout) instead of CUDA's
  // 1-byte bool mask (ComputeDevice in memfit/estimate_train.h).
  bool dropout_mask_in_input_dtype = false;
  // Attention-score soft-capping in eager attention (Gemma-2's attn_logit_softcapping:
  // scores / cap, tanh, * cap): tanh saves its output, one more score-sized tensor.
  bool attn_softcap = false;
  // Norms per layer beyond the two pre-norms (Gemma-2's post-attention and post-feedforward
  // RMSNorms: modeling_gemma2.py Gemma2DecoderLayer), each saving what a pre-norm saves.
  uint32_t extra_norms = 0;
  // Mamba-2 layers run transformers' torch-path scan (no mamba_ssm kernels): its float32 chunk
  // tensors are saved for backward too (estimate/mamba2_scan.h).
  bool mamba2_torch_scan = false;
};

struct LayerActivation {
  uint64_t saved_bytes = 0;      // kept from forward to backward without checkpointing
  uint64_t selective_bytes = 0;  // with the attention core recomputed
  uint64_t input_bytes = 0;      // the layer input (all that full checkpointing keeps)
  uint64_t eager_scores_bytes = 0;  // the s^2 part (0 unless eager)
};

// The dropout probability a model's MLP applies to its activation's output (T5's
// T5DenseActDense); 0 for models without one.
double MlpActivationDropout(const Model& model);
// Whether the stack passes a (batch, heads, q, k) position bias from layer to layer (T5's
// relative attention bias), which gradient checkpointing keeps as a block input.
bool PassesPositionBiasToLayers(const Model& model);

// Saved bytes of layer `info` for the batch x seq tokens (with its cross-attention over batch x
// cross_seq encoder tokens when it has one).
LayerActivation LayerSavedBytes(const Model& model, const LayerInfo& info, const LayerTraining& lt,
                                const ActivationParams& p);

}  // namespace memfit::estimate
