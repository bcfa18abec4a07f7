#pragma once
// Training memory per GPU (plus CPU RAM when offloading): weights, master weights, gradients,
// optimizer states, activations from a per-layer saved-for-backward model, logits and loss,
// communication buffers, CUDA context, and the peak with the stage where it occurs. Pure;
// formulas and sources in docs/estimates.md, "Training".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/estimate_inference.h"
#include "memfit/model.h"
#include "memfit/quantization.h"
#include "memfit/result.h"
#include "memfit/runtime_versions.h"

namespace memfit {

enum class TrainMethod : uint8_t { kFull, kFreeze, kLora, kQlora };
enum class Optimizer : uint8_t {
  kAdamW, kAdam, kAdamW8bit, kPagedAdamW, kPagedAdamW8bit, kAdafactor, kSgd, kSgdMomentum, kLion
};
enum class Precision : uint8_t { kFp32, kFp16Mixed, kBf16Mixed, kBf16 };
enum class Checkpointing : uint8_t { kNone, kFull, kSelective };
enum class Strategy : uint8_t { kDdp, kZero1, kZero2, kZero3, kFsdp };
enum class Offload : uint8_t { kNone, kOptimizer, kParams };
enum class TaskHead : uint8_t { kAuto, kCausalLm, kSequenceClassification, kNone };
// How the causal-LM loss is computed: transformers' cross-entropy (logits, fp32 upcast, fp32
// log_softmax), a fused/chunked kernel (Liger, Apple CCE: no vocabulary-sized tensors), or
// log_softmax in the compute dtype (TRL's selective_log_softmax for DPO/GRPO).
enum class LossImpl : uint8_t { kHf, kFused, kLowPrecision };
// Where the tensors live. PyTorch's CUDA dropout keeps a bool mask (native_dropout: 1 B per
// element); its CPU dropout keeps `empty_like(input).bernoulli_()` in the input's dtype
// (validation/FINDINGS.md 2i). kCpu: the rows of validation/measure.py --device cpu.
enum class ComputeDevice : uint8_t { kCuda, kCpu };
Result<LossImpl> ParseLossImpl(std::string_view s);
std::string_view LossImplName(LossImpl v);

std::string_view TrainMethodName(TrainMethod v);
std::string_view OptimizerName(Optimizer v);
std::string_view PrecisionName(Precision v);
std::string_view CheckpointingName(Checkpointing v);
std::string_view StrategyName(Strategy v);
std::string_view OffloadName(Offload v);
Result<TrainMethod> ParseTrainMethod(std::string_view s);
Result<Optimizer> ParseOptimizer(std::string_view s);
Result<Precision> ParsePrecision(std::string_view s);
Result<Checkpointing> ParseCheckpointing(std::string_view s);
Result<Strategy> ParseStrategy(std::string_view s);
Result<Offload> ParseOffload(std::string_view s);
Result<TaskHead> ParseTaskHead(std::string_view s);

struct LoraOptions {
  uint64_t rank = 8;       // PEFT LoraConfig defaults: r 8, alpha 8, dropout 0
  double alpha = 8;
  double dropout = 0.0;
  std::vector<std::string> targets;  // empty = PEFT's default for the model_type; "all-linear"
};

struct TrainOptions {
  TrainMethod method = TrainMethod::kFull;
  Optimizer optimizer = Optimizer::kAdamW;
  Precision precision = Precision::kBf16Mixed;
  uint64_t batch = 1;       // micro-batch per GPU
  uint64_t seq = 2048;       // tokens per sequence; an encoder-decoder's encoder input
  // Encoder-decoder models (T5, BART): target tokens per sequence, the decoder's input and the
  // labels; 0 = seq.
  uint64_t decoder_tokens = 0;
  uint64_t grad_accum = 1;
  Checkpointing checkpointing = Checkpointing::kNone;
  AttnImpl attn = AttnImpl::kSdpa;
  uint64_t gpus = 1;
  Strategy strategy = Strategy::kDdp;
  Offload offload = Offload::kNone;
  uint64_t tp = 1;
  uint64_t pp = 1;           // pipeline stages; 1F1B keeps min(pp, grad_accum) micro-batches
  LoraOptions lora{};
  QuantOptions qlora_quant{.scheme = QuantScheme::kBnbNf4, .double_quant = true};
  uint64_t freeze_trainable_layers = 2;  // LLaMA-Factory "freeze": last N layers train
  TaskHead head = TaskHead::kAuto;
  uint64_t num_labels = 2;               // sequence classification head
  // torch and transformers releases (memfit/runtime_versions.h): AdamW's foreach default and
  // temporaries, zero_grad's default, the causal-LM loss's shifted-logits copy.
  RuntimeVersions versions{};
  // AdamW(foreach=...): unset = torch's default for `versions` (foreach from 2.0 on CUDA).
  std::optional<bool> foreach_optimizer{};
  // zero_grad(set_to_none=...): unset = torch's default (True from 2.0). Kept gradients (False)
  // stay resident through the next forward and backward.
  std::optional<bool> zero_grad_set_to_none{};
  LossImpl loss = LossImpl::kHf;
  ComputeDevice device = ComputeDevice::kCuda;
  // transformers' Mamba-2 scan (memfit/runtime_versions.h); unset: torch_forward's chunked scan
  // on kCpu, the mamba_ssm kernels on kCuda.
  std::optional<Mamba2Scan> mamba2_scan{};
  OverheadOptions overhead{};
};

// One kind of tensor alive at a stage's peak ("weights", "activations", "loss backward", ...).
struct StagePart {
  std::string name;
  uint64_t bytes = 0;
};
struct StageMemory {
  std::string stage;   // "model loaded", "forward", "backward", "optimizer step"
  uint64_t bytes = 0;  // allocated tensors on the GPU at this stage's peak
  std::vector<StagePart> parts;  // what is alive then, non-zero parts only; they sum to bytes
};

struct TrainEstimate {
  // Per GPU, steady state (second iteration).
  uint64_t trainable_params = 0;
  uint64_t frozen_params = 0;
  uint64_t weights_bytes = 0;
  uint64_t master_weights_bytes = 0;   // fp32 master copy (or autocast half cache in HF AMP)
  uint64_t gradients_bytes = 0;
  uint64_t optimizer_bytes = 0;
  uint64_t activation_bytes = 0;       // saved for backward, all layers on this GPU
  uint64_t activation_per_layer_bytes = 0;
  uint64_t logits_bytes = 0;           // logits, fp32 upcast, loss buffers
  uint64_t comm_bytes = 0;             // DDP buckets, ZeRO/FSDP gather buffers
  uint64_t transient_bytes = 0;        // backward recompute / optimizer temporaries
  uint64_t cuda_context_bytes = 0;
  uint64_t allocator_reserve_bytes = 0;
  std::vector<StageMemory> stages;     // allocated tensors per stage
  uint64_t peak_bytes = 0;             // max stage + context + reserve
  std::string peak_stage;
  uint64_t cpu_bytes = 0;              // CPU RAM per process when offloading
  std::vector<std::string> assumptions;
  std::vector<std::string> notes;
};

Result<TrainEstimate> EstimateTraining(const Model& model, const TrainOptions& options);

// Optimizer state bytes for one trainable tensor of `numel` elements whose state dtype is
// `state_bytes` per element (4 fp32, 2 bf16); bitsandbytes 8-bit keeps tensors under 4096
// elements in 32-bit and adds an fp32 absmax per 256-element block.
uint64_t OptimizerStateBytes(Optimizer optimizer, const Tensor& tensor, uint32_t state_bytes);

// PEFT's default LoRA target modules for a model_type; empty when PEFT has none.
std::vector<std::string> PeftDefaultTargets(std::string_view model_type);

}  // namespace memfit
