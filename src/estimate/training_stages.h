#pragma once
// The training estimate's stages, one function each (private to src/estimate): the regime's bytes
// per element, which tensors train, the model states per GPU (weights and master copies,
// gradients, optimizer states, communication buffers), the activations saved by the forward, the
// logits and loss, the backward's working set, the optimizer step's temporaries, and the stage
// table that sums them. EstimateTraining (training.cc) calls them in this order. Each function is
// pure; its messages (assumptions, notes) come back in its result, in the order the estimate
// prints them. Formulas and sources: docs/estimates.md, "Training".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimate/activations.h"
#include "memfit/estimate_train.h"
#include "memfit/model.h"
#include "memfit/result.h"

namespace memfit::estimate {

// What a stage function has to say beside its numbers.
struct StageMessages {
  std::vector<std::string> assumptions;
  std::vector<std::string> notes;
};

// Bytes per element of each kind of tensor under the options' precision, method and strategy.
struct TrainRegime {
  bool mixed = false;           // fp16/bf16-mixed
  bool peft = false;            // LoRA or QLoRA
  bool deepspeed = false;       // ZeRO 1-3
  bool sharded_params = false;  // ZeRO-3 or FSDP
  bool ds_master = false;       // DeepSpeed mixed full training: fp32 master in the optimizer
  bool autocast = false;        // HF AMP: fp32 params, half copies per use
  uint32_t compute_bytes = 4;   // matmul outputs: 4 in fp32, else 2
  uint32_t base_weight_bytes = 4;   // frozen / base weights
  uint32_t train_weight_bytes = 4;  // trained weights (PEFT adapters: 4)
  uint32_t grad_bytes = 4;
  uint32_t state_bytes = 4;     // optimizer state dtype
  uint64_t dp = 1;              // data-parallel degree: gpus / (tp x pp)
  uint64_t mp = 1;              // model-parallel split of every state: tp x pp
  // The checkpointing the layers get: the options', unless the model's transformers class
  // ignores it (CheckpointingInEffect).
  Checkpointing checkpointing = Checkpointing::kNone;
};
// Checks the counts (--batch, --gpus, ...) and derives the regime (checkpointing as asked).
Result<TrainRegime> TrainRegimeFor(const TrainOptions& o);
// Whether `model.gradient_checkpointing_enable()` reaches the decoder layers of a model_type's
// transformers class under the release `v` (a library-version fact like those of
// memfit/runtime_versions.h, kept here while only training needs it). StarCoder2 in transformers
// 4.48-4.50: Starcoder2Model.forward (modeling_starcoder2.py, generated from
// modular_starcoder2.py since the 4.48 attention refactor) calls each decoder layer directly and
// never the checkpoint function, so every layer keeps its saved tensors (measured: issue 31,
// memfit -10% with checkpointing counted); 4.51 and later checkpoint it like Mistral, and
// releases before 4.48 had the `self._gradient_checkpointing_func` branch.
bool CheckpointingReachesLayers(std::string_view model_type, const RuntimeVersions& v);
// Whether the causal LM computes its loss itself (`shift_logits = lm_logits[:, :-1,
// :].contiguous()`, `CrossEntropyLoss()`) rather than through ForCausalLMLoss, which upcasts the
// logits to float32: GPT-NeoX before 4.49 (modeling_gpt_neox.py GPTNeoXForCausalLM.forward at
// v4.48.3; `self.loss_function` from v4.49.0), Mamba and Mamba-2 (read at v4.48.3-v4.50.0).
bool OwnCausalLmLoss(std::string_view model_type, const RuntimeVersions& v);
// The checkpointing the model's layers get under the options' transformers release: none where
// its layer loop never calls the checkpoint function (CheckpointingReachesLayers), said as an
// assumption.
Checkpointing CheckpointingInEffect(const Model& model, const TrainOptions& o,
                                    StageMessages& messages);

// Which tensors train, and the model's bytes before any sharding.
struct TrainableTensors {
  uint64_t trainable_numel = 0;
  uint64_t grad_bytes = 0;       // gradients of every trainable tensor
  uint64_t state_bytes = 0;      // optimizer states of every trainable tensor
  uint64_t largest_numel = 0;    // the largest trainable tensor (per-tensor optimizer temporaries)
  uint64_t frozen_params = 0;    // logical parameters that do not train
  uint64_t weight_bytes = 0;     // every loaded weight at its training dtype (QLoRA: quantized)
  uint64_t autocast_copy_bytes = 0;  // half copies autocast keeps of fp32 matmul weights
  uint64_t largest_block_bytes = 0;  // the heaviest layer's weights (ZeRO-3 / FSDP units)
  uint64_t tied_head_numel = 0;      // an output head tied to the trained input embedding
  uint64_t encoder_layer_grad_bytes = 0;  // gradients of an encoder-decoder's encoder layers
  // QLoRA: the largest quantized linear, dequantized for one product at a time.
  uint64_t dequantized_weight_numel = 0;
  std::vector<LayerTraining> layer_train;    // per decoder layer (or the only stack)
  std::vector<LayerTraining> encoder_train;  // per encoder layer (encoder-decoder models)
  StageMessages messages;
};
Result<TrainableTensors> CountTrainableTensors(const Model& model, const TrainOptions& o,
                                               const TrainRegime& r);

// Per GPU: weights and the master / autocast copies.
struct WeightsPerGpu {
  uint64_t weights = 0;
  uint64_t master = 0;         // DeepSpeed's fp32 master copy
  uint64_t autocast_copy = 0;  // HF AMP's half copies (its own part in the stages)
};
WeightsPerGpu WeightsAndMasterPerGpu(const TrainableTensors& t, const TrainOptions& o,
                                     const TrainRegime& r);
// Per GPU: the gradients, and DeepSpeed's fp32 gradient partition.
struct GradientsPerGpu {
  uint64_t gradients = 0;
  uint64_t fp32_partition = 0;
};
GradientsPerGpu GradientBytesPerGpu(const TrainableTensors& t, const TrainOptions& o,
                                    const TrainRegime& r);
// Per GPU: the optimizer states.
uint64_t OptimizerStatesPerGpu(const TrainableTensors& t, const TrainOptions& o,
                               const TrainRegime& r);
// Per GPU: DDP buckets, ZeRO-3 / FSDP gathered units.
uint64_t CommunicationBytesPerGpu(const TrainableTensors& t, const TrainOptions& o,
                                  const TrainRegime& r, uint64_t gradients_per_gpu);

// The model states of one GPU after offloading (what moved is in cpu).
struct ModelStatesPerGpu {
  WeightsPerGpu weights;
  GradientsPerGpu gradients;
  uint64_t optimizer = 0;
  uint64_t comm = 0;
  uint64_t cpu = 0;  // CPU RAM per process when offloading
  StageMessages messages;
};
Result<ModelStatesPerGpu> ModelStatesFor(const TrainableTensors& t, const TrainOptions& o,
                                         const TrainRegime& r);

// What the forward saves for the backward, on the first pipeline stage.
struct ForwardActivations {
  uint64_t saved_bytes = 0;          // every layer's (or checkpoint's) saved tensors, embeddings
  uint64_t per_layer_max_bytes = 0;  // the largest layer's saved tensors without checkpointing
  uint64_t encoder_bytes = 0;        // the encoder's part (encoder-decoder models)
  uint64_t tokens = 0;               // batch x the (decoder's) tokens per sequence
  uint64_t stage_layers = 0;         // layers on the first pipeline stage
  uint64_t in_flight = 1;            // micro-batches in flight (1F1B)
  // The torch-path Mamba-2 scan's transients, the largest layer's (0 with the kernels).
  uint64_t scan_forward_bytes = 0;
  uint64_t scan_backward_bytes = 0;
  StageMessages messages;
};
ForwardActivations ForwardActivationsFor(const Model& model, const TrainOptions& o,
                                         const TrainRegime& r, const TrainableTensors& t,
                                         Mamba2Scan scan);

// The head's logits and the loss's vocabulary-sized buffers.
struct LogitsAndLoss {
  uint64_t forward_bytes = 0;  // alive at the forward's end
  // What of the forward's buffers is still alive at the loss backward (unset: all of them).
  std::optional<uint64_t> at_backward_bytes;
  uint64_t backward_extra_bytes = 0;  // gradients the loss backward adds
  StageMessages messages;
};
LogitsAndLoss LogitsAndLossFor(const Model& model, const TrainOptions& o, const TrainRegime& r,
                               uint64_t tokens);

// Whether the gradients are allocated before the backward runs: kept by zero_grad(set_to_none=
// False) (torch < 2.0's default, --keep-grads) or by an earlier micro-batch of the step.
bool GradientsPersist(const TrainOptions& o);

// The backward's working set beside the saved activations.
struct BackwardWorkingSet {
  // One layer's gradients of its saved tensors, plus the recomputed layer under checkpointing
  // and (QLoRA) the weight dequantized for the input's gradient.
  uint64_t layer_bytes = 0;
  // At the tied input embedding's backward: gradient bytes beyond the gradients counted (two
  // vocabulary x hidden gradients, three when the gradients persist).
  uint64_t tied_embedding_bytes = 0;
};
BackwardWorkingSet BackwardWorkingSetFor(const TrainOptions& o, const TrainRegime& r,
                                         const TrainableTensors& t,
                                         const ForwardActivations& a);

// What is alive at the backward's moments, per GPU.
struct BackwardBytes {
  uint64_t activations = 0;
  uint64_t logits_at_loss_backward = 0;  // the forward's loss buffers the loss backward sees
  uint64_t loss_backward = 0;            // the loss backward's own gradients
  uint64_t autocast_copies = 0;
  uint64_t gradients = 0;
  uint64_t gradients_before_encoder = 0;  // all but the encoder layers' (unless they persist)
  uint64_t layer_backward = 0;            // one layer's backward (and recompute)
  uint64_t tied_embedding = 0;            // the tied embedding's gradient sum
  uint64_t scan_backward = 0;             // the torch-path Mamba-2 scan's backward
  uint64_t encoder_activations = 0;
  bool gradients_persist = false;
};

// The backward's peak: the largest of its moments, each with the parts alive then.
// - The loss backward: every saved activation, the loss's vocabulary-sized buffers and their
//   gradients. They are gone before the first layer's backward: ForCausalLMLoss's tensors are
//   freed once nll_loss's and log_softmax's backward have run, and the logits' gradient once
//   lm_head's backward has made the hidden state's (b x T x h) gradient.
// - The top layer's backward: every saved activation, that layer's gradients of its saved
//   tensors (and, checkpointed, its recomputed forward), the Mamba-2 scan's backward.
// - The end: every gradient, plus one layer's backward or the tied embedding's gradient sum
//   (the lowest layers' backward and the embedding's run when nearly all gradients exist).
// - Encoder-decoder with a tied head (T5): the decoder's embedding backward sums the head's and
//   the embedding's gradients while the encoder's saved tensors are alive and its layers'
//   gradients not yet computed (measured: c-t5l2-tr-fp32-d64, FINDINGS.md 2n).
// Kept gradients (GradientsPersist) are alive at every moment.
std::vector<StagePart> BackwardPeakParts(const BackwardBytes& b);

// The optimizer step's temporaries.
uint64_t OptimizerStepTransients(const TrainOptions& o, const TrainRegime& r,
                                 const TrainableTensors& t);

}  // namespace memfit::estimate
