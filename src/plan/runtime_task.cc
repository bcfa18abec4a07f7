// `--task` -> RuntimeModel: the one place that connects the planner to the inference and training
// estimators. "load" is weights only; "inference" takes the KV cache (placed with each decoder
// layer), the prefill activation peak and the CUDA context from EstimateInference; "train" takes
// activations, logits, communication buffers and the CUDA context per GPU, and gradients plus
// optimizer states per weight byte from EstimateTraining. Alternatives (KV dtype, flash
// attention, gradient checkpointing, 8-bit optimizer, LoRA, QLoRA) feed the advice.

#include <algorithm>
#include <memory>
#include <vector>

#include "memfit/context_default.h"
#include "memfit/estimate_inference.h"
#include "memfit/estimate_train.h"
#include "memfit/fit.h"
#include "memfit/quantization.h"

namespace memfit {
namespace {

// The 16-bit dtype activations and KV run in: the config's when it is 16-bit, else bfloat16.
Dtype ComputeDtype(const Model& model) {
  if (model.config_dtype == Dtype::kF16 || model.config_dtype == Dtype::kBF16) return *model.config_dtype;
  return Dtype::kBF16;
}

uint64_t LayerCount(const Model& model) {
  return std::max<uint64_t>(1, model.hp.layers.empty() ? model.hp.num_layers : model.hp.layers.size());
}

RuntimeBytesFn InferenceBytes(const Model& model, InferenceOptions base) {
  // The weights do not depend on context or batch: prepared once, reused by every probe.
  auto weights = std::make_shared<const Result<InferenceWeights>>(PrepareInferenceWeights(model, base));
  return [&model, base, weights](uint64_t context, uint64_t batch) -> Result<RuntimeBytes> {
    if (!*weights) return weights->error();
    InferenceOptions o = base;
    o.context_tokens = context;
    o.batch = batch;
    MEMFIT_ASSIGN_OR_RETURN(InferenceEstimate e, EstimateInference(model, o, **weights));
    RuntimeBytes r;
    r.per_gpu_bytes = e.activation_bytes + e.cuda_context_bytes + e.allocator_reserve_bytes;
    // The KV cache lives with its layer's weights; spread evenly over the layers.
    r.per_layer_bytes = (e.kv_cache_bytes + LayerCount(model) - 1) / LayerCount(model);
    return r;
  };
}

RuntimeBytesFn TrainBytes(const Model& model, TrainOptions base) {
  return [&model, base](uint64_t context, uint64_t batch) -> Result<RuntimeBytes> {
    TrainOptions o = base;
    o.seq = context;
    o.batch = batch;
    MEMFIT_ASSIGN_OR_RETURN(TrainEstimate e, EstimateTraining(model, o));
    RuntimeBytes r;
    r.per_gpu_bytes = e.activation_bytes + e.logits_bytes + e.comm_bytes + e.transient_bytes +
                      e.cuda_context_bytes;
    if (e.weights_bytes > 0) {
      r.per_weight_byte = static_cast<double>(e.master_weights_bytes + e.gradients_bytes +
                                              e.optimizer_bytes) /
                          static_cast<double>(e.weights_bytes);
    }
    return r;
  };
}

}  // namespace

Result<RuntimeAlternative> TrainRuntime(const Model& model, const TrainOptions& options) {
  RuntimeAlternative out;
  out.name = std::string(TrainMethodName(options.method));
  out.bytes_for = TrainBytes(model, options);
  if (options.method != TrainMethod::kQlora) return out;
  // QLoRA: the adapters over a base loaded in NF4 with double quantization (bitsandbytes), so
  // the weights placed per block change too.
  QuantOptions nf4 = options.qlora_quant;
  nf4.compute_dtype = Dtype::kBF16;
  MEMFIT_ASSIGN_OR_RETURN(QuantizedWeights quantized, EstimateQuantizedWeights(model, nf4));
  auto bytes = std::make_shared<const std::vector<uint64_t>>(std::move(quantized.tensor_bytes));
  const Tensor* first = model.tensors.data();
  out.weight_size_of = [bytes, first](const Tensor& t) {
    size_t i = static_cast<size_t>(&t - first);  // only this model's tensors are asked
    return i < bytes->size() ? (*bytes)[i] : t.bytes;
  };
  return out;
}

Result<RuntimeModel> RuntimeForTask(const Model& model, const TaskSettings& settings) {
  RuntimeModel runtime;
  runtime.task = settings.task;
  runtime.batch = settings.batch == 0 ? 1 : settings.batch;
  runtime.max_context_tokens = model.hp.max_position_embeddings;
  runtime.context_tokens =
      ChooseContext(settings.context_tokens, model.hp.max_position_embeddings,
                    settings.task == "train" ? ContextUse::kTrain : ContextUse::kServe)
          .tokens;
  if (settings.task == "load") return runtime;
  if (settings.task == "inference") {
    InferenceOptions base{.dtype = ComputeDtype(model), .kv_dtype = settings.kv_dtype};
    runtime.bytes_for = InferenceBytes(model, base);
    const uint32_t kv_bits = KvBits(settings.kv_dtype, base.dtype);
    if (kv_bits > 8) {  // advice only when fp8 would save something
      InferenceOptions fp8 = base;
      fp8.kv_dtype = KvDtype::kFp8;
      runtime.alternatives.push_back({"KV cache in fp8", 1, "small quality loss on long contexts",
                                      InferenceBytes(model, fp8), {}, "--kv-dtype fp8"});
    }
    InferenceOptions flash = base;
    flash.attn = AttnImpl::kFlash;
    runtime.alternatives.push_back({"flash attention", 0, "same results, less activation memory",
                                    InferenceBytes(model, flash), {}});
    // Probe once so a model the estimator cannot handle fails here, with its message.
    MEMFIT_ASSIGN_OR_RETURN(RuntimeBytes probe, runtime.bytes_for(runtime.context_tokens, runtime.batch));
    (void)probe;
    return runtime;
  }
  if (settings.task == "train") {
    runtime.offload_allowed = false;
    TrainOptions base;
    base.method = settings.train_method;
    runtime.train_options = base;
    MEMFIT_ASSIGN_OR_RETURN(RuntimeAlternative chosen, TrainRuntime(model, base));
    runtime.bytes_for = chosen.bytes_for;
    if (chosen.weight_size_of) {
      runtime.weight_rule_key = "runtime:" + chosen.name;
      runtime.weight_size_of = chosen.weight_size_of;
    }
    // Single changes, for the advice table; the searched combinations come from
    // memfit/train_search.h (fit_advice.cc).
    auto add = [&](TrainOptions o, std::string name, int cost, std::string note,
                   std::string flags) {
      auto alt = TrainRuntime(model, o);
      if (!alt) return;
      alt->name = std::move(name);
      alt->flags = std::move(flags);
      alt->quality_cost = cost;
      alt->quality_note = std::move(note);
      runtime.alternatives.push_back(std::move(*alt));
    };
    if (base.checkpointing == Checkpointing::kNone) {
      TrainOptions ckpt = base;
      ckpt.checkpointing = Checkpointing::kFull;
      add(ckpt, "gradient checkpointing", 0, "about 30% slower steps, same result",
          "--checkpointing full");
    }
    TrainOptions adam8 = base;
    adam8.optimizer = Optimizer::kAdamW8bit;
    add(adam8, "8-bit AdamW (bitsandbytes)", 1, "near-identical convergence",
        "--optimizer adamw-8bit");
    if (base.method == TrainMethod::kFull) {
      TrainOptions lora = base;
      lora.method = TrainMethod::kLora;
      add(lora, "LoRA (rank 8) instead of full fine-tuning", 2,
          "adapters only: lower capacity than full fine-tuning", "--method lora");
    }
    if (base.method != TrainMethod::kQlora) {
      TrainOptions qlora = base;
      qlora.method = TrainMethod::kQlora;
      add(qlora, "QLoRA (NF4 base with double quantization, LoRA rank 8)", 2,
          "adapters only, over a 4-bit base (QLoRA paper: matches 16-bit LoRA)",
          "--method qlora");
    }
    MEMFIT_ASSIGN_OR_RETURN(RuntimeBytes probe, runtime.bytes_for(runtime.context_tokens, runtime.batch));
    (void)probe;
    return runtime;
  }
  return MakeError("--task {}: expected load, inference or train", settings.task);
}

}  // namespace memfit
