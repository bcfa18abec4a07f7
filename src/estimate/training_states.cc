// The training estimate's first stages (estimate/training_stages.h): the regime's bytes per
// element, which tensors train (full, freeze, LoRA and QLoRA adapters), and the model states per
// GPU under each precision/method/strategy: weights and master copies, gradients, optimizer
// states, communication buffers, CPU offload. The passes' stages (activations, logits and loss,
// backward, optimizer step) are in training_passes.cc. docs/estimates.md, "Training".

#include "estimate/training_stages.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "estimate/modules.h"
#include "estimate/saturating_math.h"
#include "memfit/checked_math.h"
#include "memfit/stored_format.h"
#include "memfit/units.h"

namespace memfit::estimate {
namespace {

using saturating::Add;
using saturating::Mul;

std::string LastComponent(std::string_view module) {
  size_t dot = module.rfind('.');
  return std::string(dot == std::string_view::npos ? module : module.substr(dot + 1));
}

// The LoRA target modules: the options', else PEFT's default for the model_type, else the usual
// choice (said as an assumption).
std::vector<std::string> LoraTargets(const Model& model, const TrainOptions& o,
                                     StageMessages& messages) {
  std::vector<std::string> targets = o.lora.targets;
  if (!targets.empty()) return targets;
  targets = PeftDefaultTargets(model.model_type);
  // PEFT's default names a module this model does not have (a model built by the generic
  // builder, whose names are the usual ones): treated as no default.
  const bool default_matches = std::any_of(targets.begin(), targets.end(), [&](const auto& tg) {
    return std::any_of(model.tensors.begin(), model.tensors.end(), [&](const Tensor& t) {
      return t.name.find("." + tg + ".") != std::string::npos;
    });
  });
  if (!default_matches) targets.clear();
  if (targets.empty()) {
    // PEFT itself stops here ("Please specify target_modules"); memfit answers with the usual
    // choice and says so: q_proj and v_proj where the model has them, else every linear layer.
    auto has = [&](std::string_view suffix) {
      return std::any_of(model.tensors.begin(), model.tensors.end(),
                         [&](const Tensor& t) { return t.name.ends_with(suffix); });
    };
    if (has(".q_proj.weight") && has(".v_proj.weight")) {
      targets = {"q_proj", "v_proj"};
    } else if (has(".q_b_proj.weight") && has(".kv_b_proj.weight")) {
      targets = {"q_b_proj", "kv_b_proj"};  // MLA models
    } else {
      targets = {"all-linear"};
    }
    messages.assumptions.push_back(fmt::format(
        "LoRA targets: PEFT has no default for model_type \"{}\" (it asks for target_modules); "
        "{} assumed (--lora-targets sets them)",
        model.model_type, fmt::join(targets, ", ")));
  } else {
    messages.assumptions.push_back("LoRA targets: PEFT's default for " + model.model_type + ": " +
                                   fmt::format("{}", fmt::join(targets, ", ")));
  }
  return targets;
}

}  // namespace

Result<TrainRegime> TrainRegimeFor(const TrainOptions& o) {
  if (o.batch == 0 || o.seq == 0 || o.grad_accum == 0 || o.gpus == 0 || o.tp == 0 || o.pp == 0) {
    return MakeError(
        "train: --batch, --seq, --grad-accum, --gpus, --tp and --pp must be at least 1");
  }
  if (o.gpus % (o.tp * o.pp) != 0) {
    return MakeError("train: --gpus {} is not a multiple of --tp {} x --pp {}", o.gpus, o.tp, o.pp);
  }
  TrainRegime r;
  r.dp = o.gpus / (o.tp * o.pp);
  r.mp = o.tp * o.pp;
  r.mixed = o.precision == Precision::kFp16Mixed || o.precision == Precision::kBf16Mixed;
  r.peft = o.method == TrainMethod::kLora || o.method == TrainMethod::kQlora;
  r.deepspeed = o.strategy == Strategy::kZero1 || o.strategy == Strategy::kZero2 ||
                o.strategy == Strategy::kZero3;
  r.sharded_params = o.strategy == Strategy::kZero3 || o.strategy == Strategy::kFsdp;
  r.compute_bytes = o.precision == Precision::kFp32 ? 4 : 2;
  // Base weights: fp32 params under fp32 and HF AMP; 16-bit under pure bf16, under DeepSpeed
  // fp16/bf16 (master in the optimizer), and for LoRA (the base is loaded in 16-bit).
  r.base_weight_bytes =
      (o.precision == Precision::kBf16 || (r.mixed && (r.deepspeed || r.peft))) ? 2 : 4;
  r.train_weight_bytes = r.peft ? 4 : r.base_weight_bytes;  // PEFT keeps adapters in fp32
  r.grad_bytes =
      r.peft ? 4 : (o.precision == Precision::kBf16 ? 2 : (r.deepspeed && r.mixed ? 2 : 4));
  r.state_bytes = (o.precision == Precision::kBf16 && !r.peft) ? 2 : 4;
  r.ds_master = r.deepspeed && r.mixed && !r.peft;
  r.autocast = r.mixed && !r.deepspeed;
  r.checkpointing = o.checkpointing;
  return r;
}

bool OwnCausalLmLoss(std::string_view model_type, const RuntimeVersions& v) {
  if (model_type == "gpt_neox") return v.transformers < LibraryVersion{4, 49};
  return model_type == "mamba" || model_type == "mamba2";
}

bool CheckpointingReachesLayers(std::string_view model_type, const RuntimeVersions& v) {
  if (model_type == "starcoder2") {
    return v.transformers < LibraryVersion{4, 48} || v.transformers > LibraryVersion{4, 50};
  }
  return true;
}

Checkpointing CheckpointingInEffect(const Model& model, const TrainOptions& o,
                                    StageMessages& messages) {
  if (o.checkpointing == Checkpointing::kNone ||
      CheckpointingReachesLayers(model.model_type, o.versions)) {
    return o.checkpointing;
  }
  messages.assumptions.push_back(fmt::format(
      "transformers {}: {}'s layer loop never calls the checkpoint function, so --checkpointing "
      "{} changes nothing (every layer keeps its saved tensors)",
      LibraryVersionName(o.versions.transformers), model.model_type,
      CheckpointingName(o.checkpointing)));
  return Checkpointing::kNone;
}

Result<TrainableTensors> CountTrainableTensors(const Model& model, const TrainOptions& o,
                                               const TrainRegime& r) {
  const Hyperparameters& hp = model.hp;
  TrainableTensors tr;
  std::vector<std::string> targets;
  if (r.peft) targets = LoraTargets(model, o, tr.messages);
  const bool all_linear = targets.size() == 1 && targets[0] == "all-linear";
  const uint64_t L = hp.num_layers;
  const uint64_t freeze_from = L > o.freeze_trainable_layers ? L - o.freeze_trainable_layers : 0;
  // Encoder-decoder models (T5, BART, Whisper): hp.num_layers and hp.layers are the decoder;
  // the encoder's hp.num_encoder_layers layers get their own per-layer entries (their LoRA
  // adapters are the "encoder." tensors').
  const bool enc_dec = hp.is_encoder_decoder && hp.num_encoder_layers > 0;
  tr.layer_train.resize(L);
  tr.encoder_train.resize(enc_dec ? hp.num_encoder_layers : 0);
  for (auto* v : {&tr.layer_train, &tr.encoder_train}) {
    for (auto& lt : *v) {
      lt.trainable = o.method == TrainMethod::kFull;
      lt.save_all_linear_inputs = o.method == TrainMethod::kFull ||
                                  o.method == TrainMethod::kFreeze;
    }
  }
  if (o.method == TrainMethod::kFreeze) {
    for (uint64_t i = freeze_from; i < L; ++i) tr.layer_train[i].trainable = true;
    tr.messages.assumptions.push_back(
        fmt::format("freeze: the last {} layers train (LLaMA-Factory freeze_trainable_layers "
                    "default)", o.freeze_trainable_layers));
  }
  if (o.method == TrainMethod::kQlora) {
    // bitsandbytes' MatMul4Bit keeps no input for its backward since 0.43.2 (PR #1270,
    // `ctx.tensors = (None, B)`): the 4-bit base saves what a 16-bit LoRA base saves. It
    // dequantizes the weight for the product, and again for the input's gradient.
    tr.messages.assumptions.push_back(
        "QLoRA: bitsandbytes >= 0.43.2, whose 4-bit matmuls keep no input for the backward "
        "(older releases kept each base linear's input)");
  }
  std::map<int64_t, uint64_t> layer_bytes;
  auto add_trainable = [&](const Tensor& t) {
    tr.trainable_numel = Add({tr.trainable_numel, t.numel});
    tr.grad_bytes = Add({tr.grad_bytes, Mul({t.numel, r.grad_bytes})});
    tr.state_bytes = Add({tr.state_bytes, OptimizerStateBytes(o.optimizer, t, r.state_bytes)});
    tr.largest_numel = std::max(tr.largest_numel, t.numel);
  };
  // QLoRA base weights come from the quantization scheme.
  if (o.method == TrainMethod::kQlora) {
    QuantOptions q = o.qlora_quant;
    q.compute_dtype = Dtype::kBF16;
    MEMFIT_ASSIGN_OR_RETURN(QuantizedWeights qw, EstimateQuantizedWeights(model, q));
    tr.weight_bytes = qw.total_bytes;
    tr.dequantized_weight_numel = qw.largest_linear_params;
    tr.messages.notes.push_back(fmt::format("QLoRA base: {}{} ({} params quantized, the rest bf16)",
                                            QuantSchemeName(q.scheme),
                                            q.double_quant ? " with double quant" : "",
                                            FormatCount(qw.quantized_params)));
  }
  for (const auto& role : ClassifyTensors(model)) {
    const Tensor& t = *role.tensor;
    // Stored but never loaded (multi-token-prediction layers that transformers skips): not in
    // memory, not trained.
    if (!t.loaded) continue;
    if (role.role == Role::kTied) {
      if (t.in_head && o.method == TrainMethod::kFull) tr.tied_head_numel = t.numel;
      // Under autocast the head's linear casts the shared fp32 embedding like any other weight
      // and keeps the half copy for its backward (measured c-t5-tr-bf16m: the 32128 x 512
      // `aten::linear > aten::to` block alive at the backward's peak).
      if (t.in_head && r.autocast && !r.peft && IsFloatingPoint(t.dtype)) {
        tr.autocast_copy_bytes = Add({tr.autocast_copy_bytes, Mul({t.numel, 2})});
      }
      continue;
    }
    const int64_t layer = LayerIndex(t.name);
    if (role.role == Role::kBuffer) {
      if (o.method != TrainMethod::kQlora) tr.weight_bytes = Add({tr.weight_bytes, t.bytes});
      continue;
    }
    bool trains = false;
    if (o.method == TrainMethod::kFull) trains = true;
    if (o.method == TrainMethod::kFreeze) {
      trains = layer >= 0 && static_cast<uint64_t>(layer) >= freeze_from;
    }
    const uint32_t wb = trains ? r.train_weight_bytes : r.base_weight_bytes;
    const uint64_t wbytes = IsFloatingPoint(t.dtype) ? Mul({t.numel, wb}) : t.bytes;
    if (o.method != TrainMethod::kQlora) tr.weight_bytes = Add({tr.weight_bytes, wbytes});
    if (layer >= 0) layer_bytes[layer] = Add({layer_bytes[layer], wbytes});
    if ((role.role == Role::kLinear || role.role == Role::kHead) && wb == 4 && r.autocast) {
      tr.autocast_copy_bytes = Add({tr.autocast_copy_bytes, Mul({t.numel, 2})});
    }
    if (trains) {
      add_trainable(t);
    } else {
      // A packed base counts its logical parameters: out x in.
      tr.frozen_params = Add({tr.frozen_params, LogicalParams(t)});
    }
    const bool in_encoder = enc_dec && (t.name.starts_with("encoder.") ||
                                        t.name.find(".encoder.") != std::string::npos);
    if (trains && in_encoder && layer >= 0) {
      tr.encoder_layer_grad_bytes =
          Add({tr.encoder_layer_grad_bytes, Mul({t.numel, r.grad_bytes})});
    }
    std::vector<LayerTraining>& stack = in_encoder ? tr.encoder_train : tr.layer_train;
    if (r.peft && role.role == Role::kLinear && layer >= 0 &&
        static_cast<uint64_t>(layer) < stack.size()) {
      bool hit = all_linear;
      for (const auto& tg : targets) hit = hit || MatchesTarget(role.module, tg);
      if (hit) {
        Tensor a, b;
        a.name = std::string(role.module) + ".lora_A";
        a.shape = {o.lora.rank, role.in};
        a.numel = Mul({o.lora.rank, role.in});
        b.name = std::string(role.module) + ".lora_B";
        b.shape = {role.out, o.lora.rank};
        b.numel = Mul({role.out, o.lora.rank});
        for (const Tensor* x : {&a, &b}) {
          add_trainable(*x);
          tr.weight_bytes = Add({tr.weight_bytes, Mul({x->numel, 4})});
          if (r.autocast) {
            tr.autocast_copy_bytes = Add({tr.autocast_copy_bytes, Mul({x->numel, 2})});
          }
        }
        stack[layer].lora_modules.push_back(LastComponent(role.module));
        stack[layer].lora_in_dims.push_back(role.in);
      }
    }
  }
  for (const auto& [_, b] : layer_bytes) {
    tr.largest_block_bytes = std::max(tr.largest_block_bytes, b);
  }
  if (r.peft && tr.trainable_numel == 0) {
    return MakeError("{}: no linear module matches the LoRA targets {}", model.name,
                     fmt::format("{}", fmt::join(targets, ", ")));
  }
  // A quantized release as the base: packed integer formats (bitsandbytes, GPTQ, AWQ, NVFP4,
  // MXFP4 blocks) stay as stored under LoRA/QLoRA; FP8 weights are counted at the training
  // precision, because transformers' FP8 quantizers are not trainable (is_trainable False in
  // quantizer_finegrained_fp8.py): PEFT needs the base dequantized.
  const StoredFormat stored = DetectStoredQuantization(model).format;
  if (stored == StoredFormat::kFp8 || stored == StoredFormat::kFp8Block) {
    tr.messages.assumptions.push_back(fmt::format(
        "the checkpoint stores {}: transformers cannot train through its FP8 layers, so the "
        "base is counted dequantized at the training precision", StoredFormatName(stored)));
  } else if (stored != StoredFormat::kNone) {
    tr.messages.assumptions.push_back(fmt::format("the checkpoint stores {}: its packed weights "
                                                  "are counted as stored (frozen base)",
                                                  StoredFormatName(stored)));
  }
  return tr;
}

WeightsPerGpu WeightsAndMasterPerGpu(const TrainableTensors& t, const TrainOptions& o,
                                     const TrainRegime& r) {
  WeightsPerGpu w;
  w.weights = CeilDiv(t.weight_bytes, r.mp);
  if (o.strategy == Strategy::kZero3 || o.strategy == Strategy::kFsdp) {
    w.weights = CeilDiv(w.weights, r.dp);
  }
  // DeepSpeed mixed precision: the fp32 master copy lives in the optimizer, sharded like it.
  if (r.ds_master) w.master = CeilDiv(CeilDiv(Mul({t.trainable_numel, 4}), r.mp), r.dp);
  if (r.autocast) {
    uint64_t copy = t.autocast_copy_bytes;
    if (o.strategy == Strategy::kFsdp) copy = CeilDiv(copy, r.dp);
    w.autocast_copy = CeilDiv(copy, r.mp);
  }
  return w;
}

GradientsPerGpu GradientBytesPerGpu(const TrainableTensors& t, const TrainOptions& o,
                                    const TrainRegime& r) {
  GradientsPerGpu g;
  g.gradients = CeilDiv(t.grad_bytes, r.mp);
  if (o.strategy == Strategy::kZero2 || o.strategy == Strategy::kZero3 ||
      o.strategy == Strategy::kFsdp) {
    g.gradients = CeilDiv(g.gradients, r.dp);
  }
  // DeepSpeed's fp32 gradient partition (stage_1_and_2.py / stage3.py), sharded over dp.
  if (r.deepspeed && r.mixed && !r.peft) {
    g.fp32_partition = CeilDiv(CeilDiv(Mul({t.trainable_numel, 4}), r.mp), r.dp);
  }
  return g;
}

uint64_t OptimizerStatesPerGpu(const TrainableTensors& t, const TrainOptions& o,
                               const TrainRegime& r) {
  const uint64_t s = CeilDiv(t.state_bytes, r.mp);
  return r.deepspeed || o.strategy == Strategy::kFsdp ? CeilDiv(s, r.dp) : s;
}

uint64_t CommunicationBytesPerGpu(const TrainableTensors& t, const TrainOptions& o,
                                  const TrainRegime& r, uint64_t gradients_per_gpu) {
  if (o.strategy == Strategy::kZero3) {
    return Mul({t.largest_block_bytes, 2});  // gathered layer params + their grads (4 x LL)
  }
  if (o.strategy == Strategy::kFsdp) {
    // The unit being computed and the prefetched one, unsharded in the compute dtype, plus the
    // unsharded gradient of one unit.
    const uint64_t unit_params =
        r.base_weight_bytes ? t.largest_block_bytes / r.base_weight_bytes : 0;
    return Add({Mul({unit_params, r.compute_bytes, 2}), Mul({unit_params, r.grad_bytes})});
  }
  // DDP bucket buffers: a second copy of the gradients (gradient_as_bucket_view off).
  if (!r.deepspeed && r.dp > 1) return gradients_per_gpu;
  return 0;
}

Result<ModelStatesPerGpu> ModelStatesFor(const TrainableTensors& t, const TrainOptions& o,
                                         const TrainRegime& r) {
  ModelStatesPerGpu s;
  if (r.mp > 1) {
    s.messages.assumptions.push_back(fmt::format("model states split evenly over tp {} x pp {} "
                                                 "(embedding and head stages are slightly heavier)",
                                                 o.tp, o.pp));
  }
  s.weights = WeightsAndMasterPerGpu(t, o, r);
  s.gradients = GradientBytesPerGpu(t, o, r);
  s.optimizer = OptimizerStatesPerGpu(t, o, r);
  s.comm = CommunicationBytesPerGpu(t, o, r, s.gradients.gradients);
  if (r.deepspeed) {
    s.messages.notes.push_back("DeepSpeed layout (stage_1_and_2.py / stage3.py estimators): 16-bit "
                               "params and grads, fp32 master + states + fp32 grad partition "
                               "sharded over data parallel");
  } else if (o.strategy != Strategy::kFsdp && r.dp > 1) {
    s.messages.notes.push_back("DDP allocates gradient buckets the size of all gradients");
  }
  if (o.offload != Offload::kNone) {
    if (!r.deepspeed && o.strategy != Strategy::kFsdp) {
      return MakeError("--offload needs --strategy zero1, zero2, zero3 or fsdp");
    }
    s.cpu = Add({s.optimizer, s.weights.master, s.gradients.fp32_partition});
    s.optimizer = 0;
    s.weights.master = 0;
    s.gradients.fp32_partition = 0;
    if (o.offload == Offload::kParams) {
      if (!r.sharded_params) return MakeError("--offload params needs --strategy zero3 or fsdp");
      s.cpu = Add({s.cpu, s.weights.weights, s.gradients.gradients});
      s.weights.weights = 0;
      s.gradients.gradients = 0;
    }
  }
  return s;
}

}  // namespace memfit::estimate
