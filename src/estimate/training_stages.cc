// The training estimate's stage functions (estimate/training_stages.h): model states per
// precision/method/strategy, saved activations per layer, logits and loss, the backward's working
// set and the optimizer step's temporaries. docs/estimates.md, "Training".

#include "estimate/training_stages.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "estimate/mamba2_scan.h"
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

uint64_t Sum(const std::vector<StagePart>& parts) {
  uint64_t total = 0;
  for (const auto& p : parts) total = Add({total, p.bytes});
  return total;
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
                                  o.method == TrainMethod::kFreeze ||
                                  o.method == TrainMethod::kQlora;
    }
  }
  if (o.method == TrainMethod::kFreeze) {
    for (uint64_t i = freeze_from; i < L; ++i) tr.layer_train[i].trainable = true;
    tr.messages.assumptions.push_back(
        fmt::format("freeze: the last {} layers train (LLaMA-Factory freeze_trainable_layers "
                    "default)", o.freeze_trainable_layers));
  }
  if (o.method == TrainMethod::kQlora) {
    for (auto* v : {&tr.layer_train, &tr.encoder_train}) {
      for (auto& lt : *v) lt.trainable = true;  // bnb MatMul4Bit keeps every input
    }
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

ForwardActivations ForwardActivationsFor(const Model& model, const TrainOptions& o,
                                         const TrainRegime& r, const TrainableTensors& t,
                                         Mamba2Scan scan) {
  const Hyperparameters& hp = model.hp;
  ForwardActivations out;
  const bool enc_dec = hp.is_encoder_decoder && hp.num_encoder_layers > 0;
  const uint64_t L = hp.num_layers;
  const uint64_t L_enc = enc_dec ? hp.num_encoder_layers : 0;
  ActivationParams ap{.batch = o.batch, .seq = o.seq, .compute_bytes = r.compute_bytes,
                      .stream_bytes =
                          (o.precision == Precision::kFp32 || (r.autocast && !r.peft)) ? 4u : 2u,
                      .autocast = r.autocast, .attn = o.attn,
                      .hidden_dropout = hp.hidden_dropout,
                      .attention_dropout = hp.attention_dropout,
                      .activation_dropout = MlpActivationDropout(model),
                      .lora_rank = r.peft ? o.lora.rank : 0, .lora_dropout = o.lora.dropout,
                      .tp = o.tp,
                      .dropout_mask_in_input_dtype = o.device == ComputeDevice::kCpu,
                      // transformers 4.48 Gemma-2: eager_attention_forward applies
                      // attn_logit_softcapping (50 in every Gemma-2 config)
                      .attn_softcap = model.model_type == "gemma2",
                      .extra_norms = model.model_type == "gemma2" ? 2u : 0u,
                      .mamba2_torch_scan = scan == Mamba2Scan::kTorch};
  std::vector<LayerInfo> infos = hp.layers;
  if (infos.empty()) {
    uint64_t hd = hp.head_dim ? hp.head_dim
                              : hp.hidden_size / std::max<uint64_t>(hp.num_attention_heads, 1);
    LayerInfo global;
    global.num_heads = hp.num_attention_heads;
    global.num_kv_heads = hp.num_kv_heads ? hp.num_kv_heads : hp.num_attention_heads;
    global.head_dim_k = global.head_dim_v = hd;
    global.intermediate_size = hp.intermediate_size;
    infos.assign(L, global);
    out.messages.assumptions.push_back(
        "no per-layer description: every layer uses the global hyperparameters");
  }
  // Encoder-decoder: the encoder reads o.seq tokens, the decoder o.decoder_tokens (default
  // o.seq), and each decoder layer's cross-attention attends to the encoder's o.seq tokens.
  const uint64_t dec_seq = enc_dec && o.decoder_tokens ? o.decoder_tokens : o.seq;
  ap.seq = dec_seq;
  ap.cross_seq = enc_dec ? o.seq : 0;
  if (enc_dec) {
    out.messages.assumptions.push_back(fmt::format(
        "encoder-decoder: the encoder reads --context ({} tokens), the decoder {} target tokens{}",
        o.seq, dec_seq, o.decoder_tokens ? "" : " (--decoder-tokens; default: --context)"));
  }
  // The stack from the bottom: the encoder's layers (if any), then the decoder's. Pipeline
  // stages split the whole stack.
  struct StackLayer {
    LayerInfo info;
    const LayerTraining* train;
    uint64_t seq, cross_seq;
    uint64_t index;  // from the bottom of the whole stack
  };
  std::vector<StackLayer> stack_layers;
  uint64_t first_trainable = L;
  for (uint64_t i = 0; i < L; ++i) {
    if (t.layer_train[i].trainable || r.peft) first_trainable = std::min(first_trainable, i);
  }
  // The encoder's layers have the decoder's self-attention layout (T5, BART, Whisper); a
  // gradient reaches them unless the decoder's lowest layers are frozen (freeze).
  if (enc_dec && !infos.empty() && first_trainable == 0) {
    LayerInfo enc_info = infos.front();
    enc_info.cross_attention = false;
    for (uint64_t i = 0; i < L_enc; ++i) {
      stack_layers.push_back({enc_info, &t.encoder_train[i], o.seq, 0, i});
    }
  }
  for (uint64_t i = 0; i < std::min<uint64_t>(L, infos.size()); ++i) {
    if (i < first_trainable) continue;  // no gradient flows below the lowest trainable layer
    stack_layers.push_back({infos[i], &t.layer_train[i], dec_seq, ap.cross_seq, L_enc + i});
  }
  out.stage_layers = CeilDiv(L + L_enc, o.pp);
  out.in_flight = o.pp > 1 ? std::min(o.pp, o.grad_accum) : 1;
  uint64_t act = 0;
  for (const StackLayer& sl : stack_layers) {
    if (o.pp > 1 && sl.index >= out.stage_layers) break;  // the first stage's layers
    ActivationParams lp = ap;
    lp.seq = sl.seq;
    lp.cross_seq = sl.cross_seq;
    const LayerActivation la = LayerSavedBytes(model, sl.info, *sl.train, lp);
    if (scan == Mamba2Scan::kTorch) {
      // The torch-path Mamba-2 scan's transients (estimate/mamba2_scan.h), the largest layer's:
      // its float32 products in the forward (G_intermediate and one more), and in the backward
      // the two gradients of G_intermediate's factors, each a full 6-D product before its
      // reduction.
      if (auto shape = Mamba2ScanShapeFor(model, sl.info, o.batch, sl.seq, o.tp)) {
        const Mamba2ScanBytes sb = Mamba2TorchScanBytes(*shape);
        out.scan_forward_bytes = std::max(out.scan_forward_bytes, sb.forward_peak);
        out.scan_backward_bytes = std::max(out.scan_backward_bytes, sb.backward_peak);
      }
    }
    uint64_t b = la.saved_bytes;
    if (r.checkpointing == Checkpointing::kFull) b = la.input_bytes;
    if (r.checkpointing == Checkpointing::kSelective) b = la.selective_bytes;
    act = Add({act, b});
    if (sl.index < L_enc) out.encoder_bytes = Add({out.encoder_bytes, b});
    out.per_layer_max_bytes = std::max(out.per_layer_max_bytes, la.saved_bytes);
  }
  act = Mul({act, out.in_flight});
  // Embedding output: dropout mask, LayerNorm (encoders) and the token ids; an encoder-decoder
  // embeds the encoder's and the decoder's tokens.
  out.tokens = Mul({o.batch, dec_seq});
  const uint64_t embedded_tokens =
      enc_dec ? Add({out.tokens, Mul({o.batch, o.seq})}) : out.tokens;
  const uint64_t embed_mask = o.device == ComputeDevice::kCpu ? ap.stream_bytes : 1;
  // The embedding output's dropout: the hidden one (BertEmbeddings, T5Stack; StarCoder2's
  // `embedding_dropout`, equal to its `residual_dropout` in the released configs, and GPT-2's
  // `embd_pdrop` are not read apart).
  const bool embed_dropout = hp.hidden_dropout > 0;
  act = Add({act, Mul({embedded_tokens, 8 + (embed_dropout ? embed_mask * hp.hidden_size : 0) +
                                            (hp.norm == "layernorm" ? 4 * hp.hidden_size : 0)})});
  if (enc_dec) {
    // Each stack's final norm and dropout (T5 final_layer_norm + dropout, modeling_t5.py
    // T5Stack.forward): the norm's saved tensors and the dropout mask; the encoder's output is
    // kept once for every cross-attention's k and v (and the decoder's, scaled, for lm_head).
    const uint64_t h = hp.hidden_size, sb = ap.stream_bytes;
    const uint64_t norm = hp.norm == "layernorm" ? (r.autocast ? 4 : sb) * h : 4 * h + sb * h;
    const uint64_t per_tok = norm + (hp.hidden_dropout > 0 ? embed_mask * h : 0) + sb * h;
    act = Add({act, Mul({Add({Mul({o.batch, o.seq}), out.tokens}), per_tok})});
    if (r.checkpointing == Checkpointing::kFull && PassesPositionBiasToLayers(model)) {
      // The checkpointed blocks' position-bias inputs, one per attention kind, in the compute
      // dtype: encoder self (T_e x T_e), decoder self (T_d x T_d), cross (T_d x T_e; zeros plus
      // the encoder mask). Measured: c-t5l2-lora-bf16-ckpt, `CheckpointFunction > aten::add`.
      const uint64_t heads = CeilDiv(hp.num_attention_heads, o.tp);
      const uint64_t pairs = o.seq * o.seq + dec_seq * dec_seq + dec_seq * o.seq;
      act = Add({act, Mul({o.batch, heads, pairs, r.compute_bytes})});
    }
    if (out.encoder_bytes > 0) {
      const uint64_t enc_tokens = Mul({o.batch, o.seq});
      const uint64_t embed = 8 + (embed_dropout ? embed_mask * h : 0) +
                             (hp.norm == "layernorm" ? 4 * h : 0);
      out.encoder_bytes = Add({out.encoder_bytes, Mul({enc_tokens, per_tok + embed})});
    }
  }
  out.saved_bytes = act;
  return out;
}

LogitsAndLoss LogitsAndLossFor(const Model& model, const TrainOptions& o, const TrainRegime& r,
                               uint64_t tokens) {
  const Hyperparameters& hp = model.hp;
  LogitsAndLoss out;
  const uint32_t compute = r.compute_bytes;
  TaskHead head = o.head;
  if (head == TaskHead::kAuto) {
    const bool has_lm_head = std::any_of(model.tensors.begin(), model.tensors.end(),
                                         [&](const Tensor& t) {
                                           return t.in_head && t.shape.size() == 2 &&
                                                  t.shape[0] == hp.vocab_size;
                                         });
    head = has_lm_head ? TaskHead::kCausalLm : TaskHead::kNone;
    if (head == TaskHead::kCausalLm) {
      out.messages.assumptions.push_back("task: causal LM loss over the vocabulary");
    }
  }
  if (head == TaskHead::kCausalLm && hp.vocab_size) {
    const uint64_t v = CeilDiv(hp.vocab_size, o.tp);
    const uint64_t n = Mul({tokens, v});
    // Encoder-decoder heads (T5, BART, Whisper at transformers 4.48: modeling_t5.py
    // T5ForConditionalGeneration.forward) call CrossEntropyLoss on the logits as they are, like
    // a masked LM: in the compute dtype unless autocast upcasts it (measured: pure bf16
    // c-t5l2-lora-bf16-ckpt, three b x T x V bf16 tensors at the loss backward).
    const bool loss_in_compute_dtype = model.architecture.ends_with("ForMaskedLM") ||
                                       (hp.is_encoder_decoder && !r.autocast);
    if (loss_in_compute_dtype && o.loss != LossImpl::kFused) {
      // A masked LM (BertForMaskedLM 4.48): CrossEntropyLoss on the logits as they are, in the
      // compute dtype and without a shift: logits and the saved log_softmax in the forward;
      // log_softmax, nll_loss's and log_softmax's gradients at the loss backward (measured:
      // validation/FINDINGS.md 2h).
      out.forward_bytes = Mul({n, 2 * compute});
      out.backward_extra_bytes = Mul({n, compute});
      out.messages.assumptions.push_back(
          hp.is_encoder_decoder ? "task: LM loss over the decoder tokens in the compute dtype"
                                : "task: masked-LM loss in the compute dtype at every position");
    } else if (o.loss == LossImpl::kHf) {
      // Forward: logits (compute dtype), their fp32 upcast, the saved log_softmax (fp32). At the
      // loss backward three fp32 vocabulary tensors are alive: the saved log_softmax, nll_loss's
      // gradient and log_softmax's gradient (the logits and their upcast are freed by then:
      // measured, FINDINGS.md 2f).
      const uint64_t per = compute + (compute != 4 ? 4 : 0) + 4;
      out.forward_bytes = Mul({n, per});
      // With one sequence the slice logits[..., :-1, :] is already contiguous and
      // `.contiguous()` copies nothing (measured: c-gm-lora-bf16, FINDINGS.md 2o).
      if (LossCopiesShiftedLogits(o.versions) && !hp.is_encoder_decoder && o.batch > 1) {
        // transformers < 4.50: the fp32 copy of the shifted logits, b x (seq - 1) x V, alive with
        // the others at the forward's end (measured: FINDINGS.md 2d). Encoder-decoder heads
        // (T5 modeling_t5.py:1924) call CrossEntropyLoss on the logits unshifted.
        out.forward_bytes = Add({out.forward_bytes, Mul({o.batch, o.seq - 1, v, 4})});
        out.messages.assumptions.push_back(fmt::format(
            "transformers {}: the causal-LM loss copies the shifted logits in fp32 (4.50 pads the "
            "labels instead)", LibraryVersionName(o.versions.transformers)));
      }
      // At the loss backward the three fp32 tensors above are all that is left (the logits,
      // their upcast and the shifted copy are freed).
      out.at_backward_bytes = std::min(out.forward_bytes, Mul({n, 12}));
      out.backward_extra_bytes = Mul({n, 12}) - *out.at_backward_bytes;
      if (model.model_type == "gemma2") {
        // Final-logit soft-capping (Gemma2ForCausalLM: logits / cap, tanh, * cap; the config's
        // final_logit_softcapping, 30 in every Gemma-2): tanh saves its output, in the logits'
        // dtype, until its backward runs after the loss's (measured: FINDINGS.md 2o).
        out.forward_bytes = Add({out.forward_bytes, Mul({n, compute})});
        *out.at_backward_bytes = Add({*out.at_backward_bytes, Mul({n, compute})});
      }
    } else if (o.loss == LossImpl::kLowPrecision) {
      // logits and their log_softmax in the compute dtype; the gradient in the same dtype.
      out.forward_bytes = Mul({n, 2 * compute});
      out.backward_extra_bytes = Mul({n, compute});
    } else {
      out.messages.notes.push_back("fused/chunked cross-entropy: no vocabulary-sized tensors");
    }
  } else if (head == TaskHead::kSequenceClassification) {
    out.forward_bytes = Mul({o.batch, o.num_labels, 12});
  }
  return out;
}

BackwardWorkingSet BackwardWorkingSetFor(const TrainOptions& o, const TrainRegime& r,
                                         const TrainableTensors& t,
                                         const ForwardActivations& a) {
  BackwardWorkingSet w;
  // Backward holds the gradients of one layer's saved tensors at a time, and with checkpointing
  // one recomputed layer as well.
  w.layer_bytes = Add({a.per_layer_max_bytes,
                       r.checkpointing == Checkpointing::kNone ? 0 : a.per_layer_max_bytes});
  // A head tied to the input embedding: both uses send a gradient to the one AccumulateGrad
  // node, whose input buffer sums them (torch/csrc/autograd/input_buffer.cpp `accumulate` at
  // v1.13: `old_var + var` out of place, since the head's weight gradient is the transposed view
  // MmBackward0 returns, not reusable in place). At the embedding's backward (the last op) the
  // head's gradient, `embedding_dense_backward`'s dense gradient (`at::zeros` of V x h) and their
  // sum are alive (measured: FINDINGS.md 2c). Without a kept gradient the sum becomes .grad
  // (AccumulateGrad steals it): two V x h gradients beyond the gradients counted. With the
  // gradients kept (set_to_none=False, or an earlier micro-batch's), .grad is already there and
  // AccumulateGrad adds the sum into it in place afterwards (accumulate_grad.h
  // `variable_grad += new_grad`): the head's, the dense and the sum, three beyond.
  const uint64_t copies = GradientsPersist(o) ? 3 : 2;
  w.tied_embedding_bytes = CeilDiv(Mul({t.tied_head_numel, copies * r.grad_bytes}), o.tp);
  return w;
}

bool GradientsPersist(const TrainOptions& o) {
  const bool set_to_none =
      o.zero_grad_set_to_none.value_or(ZeroGradSetsToNoneByDefault(o.versions));
  return o.grad_accum > 1 || !set_to_none;
}

std::vector<StagePart> BackwardPeakParts(const BackwardBytes& b) {
  const uint64_t kept = b.gradients_persist ? b.gradients : 0;
  std::vector<std::vector<StagePart>> moments;
  moments.push_back({{"activations", b.activations},
                     {"logits and loss", b.logits_at_loss_backward},
                     {"autocast weight copies", b.autocast_copies},
                     {"loss backward", b.loss_backward},
                     {"gradients", kept}});
  moments.push_back({{"activations", b.activations},
                     {"autocast weight copies", b.autocast_copies},
                     {"Mamba-2 scan backward (torch path)", b.scan_backward},
                     {"gradients", kept},
                     {"layer backward and recompute", b.layer_backward}});
  std::vector<StagePart> at_end{{"gradients", b.gradients}};
  if (b.gradients_persist || b.tied_embedding > b.layer_backward) {
    at_end.push_back({"tied embedding gradients", b.tied_embedding});
  } else {
    at_end.push_back({"layer backward and recompute", b.layer_backward});
  }
  at_end.push_back({"Mamba-2 scan backward (torch path)", b.scan_backward});
  moments.push_back(std::move(at_end));
  if (b.encoder_activations > 0 && b.tied_embedding > 0) {
    moments.push_back({{"gradients", b.gradients_before_encoder},
                       {"tied embedding gradients", b.tied_embedding},
                       {"encoder activations", b.encoder_activations}});
  }
  size_t peak = 0;
  for (size_t i = 1; i < moments.size(); ++i) {
    if (Sum(moments[i]) > Sum(moments[peak])) peak = i;
  }
  return std::move(moments[peak]);
}

uint64_t OptimizerStepTransients(const TrainOptions& o, const TrainRegime& r,
                                 const TrainableTensors& t) {
  if (o.offload != Offload::kNone) return 0;
  const bool foreach = o.foreach_optimizer.value_or(ForeachAdamwByDefault(o.versions));
  const bool torch_adam = o.optimizer == Optimizer::kAdamW || o.optimizer == Optimizer::kAdam;
  switch (o.optimizer) {
    case Optimizer::kAdamW: case Optimizer::kAdam: case Optimizer::kPagedAdamW:
    case Optimizer::kLion:
      // foreach: state-sized temporaries, one in torch 2.x (sqrt, then divided and eps added
      // in place), two in torch 1.x (ForeachAdamwStateCopies). Single tensor:
      // exp_avg_sq.sqrt() and its quotient by bias_correction2_sqrt are alive together, two
      // temporaries of the largest tensor (measured: FINDINGS.md 2a).
      return foreach ? Mul({CeilDiv(Mul({t.trainable_numel, r.state_bytes}),
                                    r.mp * (r.deepspeed ? r.dp : 1)),
                            torch_adam ? ForeachAdamwStateCopies(o.versions) : 1})
                     : Mul({t.largest_numel, 2 * r.state_bytes});
    case Optimizer::kAdafactor:
      return Mul({t.largest_numel, 2 * 4});
    default:
      return 0;
  }
}

}  // namespace memfit::estimate
