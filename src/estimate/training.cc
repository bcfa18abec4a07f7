// Training memory per GPU: model states per precision/method/strategy, saved activations per
// layer, logits and loss, communication buffers, and the peak per stage. docs/estimates.md.

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "estimate/activations.h"
#include "estimate/mamba2_scan.h"
#include "estimate/modules.h"
#include "memfit/checked_math.h"
#include "memfit/estimate_train.h"
#include "memfit/stored_format.h"
#include "memfit/units.h"

namespace memfit {
namespace {

using estimate::Role;

uint64_t CeilDiv(uint64_t a, uint64_t b) { return b == 0 ? a : a / b + (a % b != 0); }
uint64_t Mul(uint64_t a, uint64_t b) { return CheckedMul(a, b).value_or(UINT64_MAX); }
uint64_t Add(uint64_t a, uint64_t b) { return CheckedAdd(a, b).value_or(UINT64_MAX); }
uint64_t Scale(uint64_t v, double f) { return static_cast<uint64_t>(static_cast<double>(v) * f); }

std::string LastComponent(std::string_view module) {
  size_t dot = module.rfind('.');
  return std::string(dot == std::string_view::npos ? module : module.substr(dot + 1));
}

struct Trainable {
  uint64_t numel = 0;
  uint64_t grad_bytes = 0;
  uint64_t state_bytes = 0;
  uint64_t largest = 0;  // elements of the largest trainable tensor
};

}  // namespace

namespace {

// The estimate with the Mamba-2 scan `scan` (EstimateTraining runs it for both paths when the
// model has Mamba-2 layers).
Result<TrainEstimate> EstimateTrainingWith(const Model& model, const TrainOptions& o,
                                           Mamba2Scan scan) {
  const Hyperparameters& hp = model.hp;
  TrainEstimate e;
  if (o.batch == 0 || o.seq == 0 || o.grad_accum == 0 || o.gpus == 0 || o.tp == 0 || o.pp == 0) {
    return MakeError("train: --batch, --seq, --grad-accum, --gpus, --tp and --pp must be at least 1");
  }
  if (o.gpus % (o.tp * o.pp) != 0) {
    return MakeError("train: --gpus {} is not a multiple of --tp {} x --pp {}", o.gpus, o.tp, o.pp);
  }
  if (hp.hidden_size == 0 || hp.num_layers == 0) {
    return MakeError("{}: training estimate needs hidden_size and the number of layers", model.name);
  }
  const uint64_t dp = o.gpus / (o.tp * o.pp);
  e.assumptions.push_back(RuntimeVersionsAssumption(o.versions));
  const bool mixed = o.precision == Precision::kFp16Mixed || o.precision == Precision::kBf16Mixed;
  const bool peft = o.method == TrainMethod::kLora || o.method == TrainMethod::kQlora;
  const bool deepspeed = o.strategy == Strategy::kZero1 || o.strategy == Strategy::kZero2 ||
                         o.strategy == Strategy::kZero3;
  const bool sharded_params = o.strategy == Strategy::kZero3 || o.strategy == Strategy::kFsdp;
  // Bytes per element.
  const uint32_t compute = o.precision == Precision::kFp32 ? 4 : 2;
  // Base weights: fp32 params under fp32 and HF AMP; 16-bit under pure bf16, under DeepSpeed
  // fp16/bf16 (master in the optimizer), and for LoRA (the base is loaded in 16-bit).
  uint32_t base_w = 4;
  if (o.precision == Precision::kBf16 || (mixed && (deepspeed || peft))) base_w = 2;
  const uint32_t train_w = peft ? 4 : base_w;  // PEFT keeps adapters in fp32
  const uint32_t grad_b = peft ? 4 : (o.precision == Precision::kBf16 ? 2 : (deepspeed && mixed ? 2 : 4));
  const uint32_t state_b = (o.precision == Precision::kBf16 && !peft) ? 2 : 4;
  const bool ds_master = deepspeed && mixed && !peft;
  const bool autocast = mixed && !deepspeed;

  // ---- which tensors train
  std::vector<std::string> targets = o.lora.targets;
  if (peft && targets.empty()) {
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
      e.assumptions.push_back(fmt::format(
          "LoRA targets: PEFT has no default for model_type \"{}\" (it asks for target_modules); "
          "{} assumed (--lora-targets sets them)",
          model.model_type, fmt::join(targets, ", ")));
    } else {
      e.assumptions.push_back("LoRA targets: PEFT's default for " + model.model_type + ": " +
                              fmt::format("{}", fmt::join(targets, ", ")));
    }
  }
  const bool all_linear = targets.size() == 1 && targets[0] == "all-linear";
  const uint64_t L = hp.num_layers;
  const uint64_t freeze_from = L > o.freeze_trainable_layers ? L - o.freeze_trainable_layers : 0;
  // Encoder-decoder models (T5, BART, Whisper): hp.num_layers and hp.layers are the decoder;
  // the encoder's hp.num_encoder_layers layers get their own per-layer entries (their LoRA
  // adapters are the "encoder." tensors').
  const bool enc_dec = hp.is_encoder_decoder && hp.num_encoder_layers > 0;
  const uint64_t L_enc = enc_dec ? hp.num_encoder_layers : 0;
  std::vector<estimate::LayerTraining> layer_train(L), encoder_train(L_enc);
  for (auto* v : {&layer_train, &encoder_train}) for (auto& lt : *v) {
    lt.trainable = o.method == TrainMethod::kFull;
    lt.save_all_linear_inputs = o.method == TrainMethod::kFull || o.method == TrainMethod::kFreeze ||
                                o.method == TrainMethod::kQlora;
  }
  if (o.method == TrainMethod::kFreeze) {
    for (uint64_t i = freeze_from; i < L; ++i) layer_train[i].trainable = true;
    e.assumptions.push_back(fmt::format("freeze: the last {} layers train (LLaMA-Factory "
                                        "freeze_trainable_layers default)", o.freeze_trainable_layers));
  }
  if (o.method == TrainMethod::kQlora) {
    for (auto* v : {&layer_train, &encoder_train}) {
      for (auto& lt : *v) lt.trainable = true;  // bnb MatMul4Bit keeps every input
    }
  }
  Trainable tr;
  uint64_t frozen = 0, weights = 0, autocast_copy = 0, largest_block = 0;
  std::map<int64_t, uint64_t> layer_bytes;
  uint64_t nonlayer_bytes = 0;
  auto add_trainable = [&](const Tensor& t, uint32_t wbytes) {
    tr.numel = Add(tr.numel, t.numel);
    tr.grad_bytes = Add(tr.grad_bytes, Mul(t.numel, grad_b));
    tr.state_bytes = Add(tr.state_bytes, OptimizerStateBytes(o.optimizer, t, state_b));
    tr.largest = std::max(tr.largest, t.numel);
    (void)wbytes;
  };
  // QLoRA base weights come from the quantization scheme.
  if (o.method == TrainMethod::kQlora) {
    QuantOptions q = o.qlora_quant;
    q.compute_dtype = Dtype::kBF16;
    MEMFIT_ASSIGN_OR_RETURN(QuantizedWeights qw, EstimateQuantizedWeights(model, q));
    weights = qw.total_bytes;
    e.notes.push_back(fmt::format("QLoRA base: {}{} ({} params quantized, the rest bf16)",
                                  QuantSchemeName(q.scheme), q.double_quant ? " with double quant" : "",
                                  FormatCount(qw.quantized_params)));
  }
  const auto roles = estimate::ClassifyTensors(model);
  uint64_t tied_head_numel = 0;  // an output head tied to the trained input embedding
  uint64_t encoder_layer_grad_bytes = 0;  // gradients of an encoder-decoder's encoder layers
  for (const auto& r : roles) {
    const Tensor& t = *r.tensor;
    // Stored but never loaded (multi-token-prediction layers that transformers skips): not in
    // memory, not trained.
    if (!t.loaded) continue;
    if (r.role == Role::kTied) {
      if (t.in_head && o.method == TrainMethod::kFull) tied_head_numel = t.numel;
      // Under autocast the head's linear casts the shared fp32 embedding like any other weight
      // and keeps the half copy for its backward (measured c-t5-tr-bf16m: the 32128 x 512
      // `aten::linear > aten::to` block alive at the backward's peak).
      if (t.in_head && autocast && !peft && IsFloatingPoint(t.dtype)) {
        autocast_copy = Add(autocast_copy, Mul(t.numel, 2));
      }
      continue;
    }
    const int64_t layer = estimate::LayerIndex(t.name);
    if (r.role == Role::kBuffer) {
      if (o.method != TrainMethod::kQlora) weights = Add(weights, t.bytes);
      continue;
    }
    bool trains = false;
    if (o.method == TrainMethod::kFull) trains = true;
    if (o.method == TrainMethod::kFreeze) trains = layer >= 0 && static_cast<uint64_t>(layer) >= freeze_from;
    const uint32_t wb = trains ? train_w : base_w;
    uint64_t wbytes = IsFloatingPoint(t.dtype) ? Mul(t.numel, wb) : t.bytes;
    if (o.method != TrainMethod::kQlora) weights = Add(weights, wbytes);
    if (layer >= 0) layer_bytes[layer] = Add(layer_bytes[layer], wbytes);
    else nonlayer_bytes = Add(nonlayer_bytes, wbytes);
    if ((r.role == Role::kLinear || r.role == Role::kHead) && wb == 4 && autocast) {
      autocast_copy = Add(autocast_copy, Mul(t.numel, 2));
    }
    if (trains) add_trainable(t, wb);
    else frozen = Add(frozen, LogicalParams(t));  // logical: a packed base counts out x in
    const bool in_encoder = enc_dec && (t.name.starts_with("encoder.") ||
                                        t.name.find(".encoder.") != std::string::npos);
    if (trains && in_encoder && layer >= 0) {
      encoder_layer_grad_bytes = Add(encoder_layer_grad_bytes, Mul(t.numel, grad_b));
    }
    std::vector<estimate::LayerTraining>& stack = in_encoder ? encoder_train : layer_train;
    if (peft && r.role == Role::kLinear && layer >= 0 &&
        static_cast<uint64_t>(layer) < stack.size()) {
      bool hit = all_linear;
      for (const auto& tg : targets) hit = hit || estimate::MatchesTarget(r.module, tg);
      if (hit) {
        Tensor a{.name = std::string(r.module) + ".lora_A", .shape = {o.lora.rank, r.in}, .numel = Mul(o.lora.rank, r.in)};
        Tensor b{.name = std::string(r.module) + ".lora_B", .shape = {r.out, o.lora.rank}, .numel = Mul(r.out, o.lora.rank)};
        for (const Tensor* x : {&a, &b}) {
          add_trainable(*x, 4);
          weights = Add(weights, Mul(x->numel, 4));
          if (autocast) autocast_copy = Add(autocast_copy, Mul(x->numel, 2));
        }
        stack[layer].lora_modules.push_back(LastComponent(r.module));
        stack[layer].lora_in_dims.push_back(r.in);
      }
    }
  }
  for (const auto& [_, b] : layer_bytes) largest_block = std::max(largest_block, b);
  if (peft && tr.numel == 0) {
    return MakeError("{}: no linear module matches the LoRA targets {}", model.name,
                     fmt::format("{}", fmt::join(targets, ", ")));
  }
  e.trainable_params = tr.numel;
  e.frozen_params = frozen;

  // A quantized release as the base: packed integer formats (bitsandbytes, GPTQ, AWQ, NVFP4,
  // MXFP4 blocks) stay as stored under LoRA/QLoRA; FP8 weights are counted at the training
  // precision, because transformers' FP8 quantizers are not trainable (is_trainable False in
  // quantizer_finegrained_fp8.py): PEFT needs the base dequantized.
  {
    const StoredFormat stored = DetectStoredQuantization(model).format;
    if (stored == StoredFormat::kFp8 || stored == StoredFormat::kFp8Block) {
      e.assumptions.push_back(fmt::format(
          "the checkpoint stores {}: transformers cannot train through its FP8 layers, so the "
          "base is counted dequantized at the training precision", StoredFormatName(stored)));
    } else if (stored != StoredFormat::kNone) {
      e.assumptions.push_back(fmt::format("the checkpoint stores {}: its packed weights are "
                                          "counted as stored (frozen base)",
                                          StoredFormatName(stored)));
    }
  }
  // ---- sharding of model states (per GPU)
  const uint64_t mp = o.tp * o.pp;  // model-parallel split of every state
  if (mp > 1) {
    e.assumptions.push_back(fmt::format("model states split evenly over tp {} x pp {} (embedding "
                                        "and head stages are slightly heavier)", o.tp, o.pp));
  }
  uint64_t w = CeilDiv(weights, mp), g = CeilDiv(tr.grad_bytes, mp), s = CeilDiv(tr.state_bytes, mp);
  uint64_t master = ds_master ? CeilDiv(Mul(tr.numel, 4), mp) : 0;
  uint64_t grad_partition = 0;  // DeepSpeed's fp32 gradient partition
  uint64_t comm = 0;
  if (deepspeed) {
    s = CeilDiv(s, dp);
    master = CeilDiv(master, dp);
    if (mixed && !peft) grad_partition = CeilDiv(CeilDiv(Mul(tr.numel, 4), mp), dp);
    if (o.strategy == Strategy::kZero2 || o.strategy == Strategy::kZero3) g = CeilDiv(g, dp);
    if (o.strategy == Strategy::kZero3) {
      w = CeilDiv(w, dp);
      comm = Mul(largest_block, 2);  // gathered layer params + their grads (DeepSpeed 4 x LL)
    }
    e.notes.push_back("DeepSpeed layout (stage_1_and_2.py / stage3.py estimators): 16-bit params and "
                      "grads, fp32 master + states + fp32 grad partition sharded over data parallel");
  } else if (o.strategy == Strategy::kFsdp) {
    w = CeilDiv(w, dp);
    g = CeilDiv(g, dp);
    s = CeilDiv(s, dp);
    // The unit being computed and the prefetched one, unsharded in the compute dtype, plus the
    // unsharded gradient of one unit.
    const uint64_t unit_params = base_w ? largest_block / base_w : 0;
    comm = Add(Mul(Mul(unit_params, compute), 2), Mul(unit_params, grad_b));
    if (mixed) autocast_copy = CeilDiv(autocast_copy, dp);
  } else if (dp > 1) {
    comm = g;  // DDP bucket buffers: a second copy of the gradients (gradient_as_bucket_view off)
    e.notes.push_back("DDP allocates gradient buckets the size of all gradients");
  }
  uint64_t cpu = 0;
  if (o.offload != Offload::kNone) {
    if (!deepspeed && o.strategy != Strategy::kFsdp) {
      return MakeError("--offload needs --strategy zero1, zero2, zero3 or fsdp");
    }
    cpu = Add(Add(s, master), grad_partition);
    s = 0;
    master = 0;
    grad_partition = 0;
    if (o.offload == Offload::kParams) {
      if (!sharded_params) return MakeError("--offload params needs --strategy zero3 or fsdp");
      cpu = Add(Add(cpu, w), g);
      w = 0;
      g = 0;
    }
  }
  e.weights_bytes = w;
  e.master_weights_bytes = Add(master, autocast ? CeilDiv(autocast_copy, mp) : 0);
  e.gradients_bytes = Add(g, grad_partition);
  e.optimizer_bytes = s;
  e.comm_bytes = comm;
  e.cpu_bytes = cpu;

  // ---- activations
  estimate::ActivationParams ap{.batch = o.batch, .seq = o.seq, .compute_bytes = compute,
                                .stream_bytes = (o.precision == Precision::kFp32 || (autocast && !peft)) ? 4u : 2u,
                                .autocast = autocast, .attn = o.attn,
                                .hidden_dropout = hp.hidden_dropout, .attention_dropout = hp.attention_dropout,
                                .activation_dropout = estimate::MlpActivationDropout(model),
                                .lora_rank = peft ? o.lora.rank : 0, .lora_dropout = o.lora.dropout,
                                .tp = o.tp,
                                .dropout_mask_in_input_dtype = o.device == ComputeDevice::kCpu,
                                // transformers 4.48 Gemma-2: eager_attention_forward applies
                                // attn_logit_softcapping (50 in every Gemma-2 config)
                                .attn_softcap = model.model_type == "gemma2",
                                .extra_norms = model.model_type == "gemma2" ? 2u : 0u,
                                .mamba2_torch_scan = scan == Mamba2Scan::kTorch};
  std::vector<LayerInfo> infos = hp.layers;
  if (infos.empty()) {
    uint64_t hd = hp.head_dim ? hp.head_dim : hp.hidden_size / std::max<uint64_t>(hp.num_attention_heads, 1);
    infos.assign(L, LayerInfo{.num_heads = hp.num_attention_heads,
                              .num_kv_heads = hp.num_kv_heads ? hp.num_kv_heads : hp.num_attention_heads,
                              .head_dim_k = hd, .head_dim_v = hd, .intermediate_size = hp.intermediate_size});
    e.assumptions.push_back("no per-layer description: every layer uses the global hyperparameters");
  }
  // Encoder-decoder: the encoder reads o.seq tokens, the decoder o.decoder_tokens (default
  // o.seq), and each decoder layer's cross-attention attends to the encoder's o.seq tokens.
  const uint64_t dec_seq = enc_dec && o.decoder_tokens ? o.decoder_tokens : o.seq;
  ap.seq = dec_seq;
  ap.cross_seq = enc_dec ? o.seq : 0;
  if (enc_dec) {
    e.assumptions.push_back(fmt::format(
        "encoder-decoder: the encoder reads --context ({} tokens), the decoder {} target tokens{}",
        o.seq, dec_seq, o.decoder_tokens ? "" : " (--decoder-tokens; default: --context)"));
  }
  // The stack from the bottom: the encoder's layers (if any), then the decoder's. Pipeline
  // stages split the whole stack.
  struct StackLayer {
    LayerInfo info;
    const estimate::LayerTraining* train;
    uint64_t seq, cross_seq;
    uint64_t index;  // from the bottom of the whole stack
  };
  std::vector<StackLayer> stack_layers;
  uint64_t first_trainable = L;
  for (uint64_t i = 0; i < L; ++i) {
    if (layer_train[i].trainable || peft) { first_trainable = std::min(first_trainable, i); }
  }
  // The encoder's layers have the decoder's self-attention layout (T5, BART, Whisper); a
  // gradient reaches them unless the decoder's lowest layers are frozen (freeze).
  if (enc_dec && !infos.empty() && first_trainable == 0) {
    LayerInfo enc_info = infos.front();
    enc_info.cross_attention = false;
    for (uint64_t i = 0; i < L_enc; ++i) {
      stack_layers.push_back({enc_info, &encoder_train[i], o.seq, 0, i});
    }
  }
  for (uint64_t i = 0; i < std::min<uint64_t>(L, infos.size()); ++i) {
    if (i < first_trainable) continue;  // no gradient flows below the lowest trainable layer
    stack_layers.push_back({infos[i], &layer_train[i], dec_seq, ap.cross_seq, L_enc + i});
  }
  const uint64_t stage_layers = CeilDiv(L + L_enc, o.pp);
  const uint64_t in_flight = o.pp > 1 ? std::min(o.pp, o.grad_accum) : 1;
  uint64_t act = 0, per_layer_max = 0;
  uint64_t encoder_act = 0;  // the encoder's part of act (encoder-decoder models)
  // The torch-path Mamba-2 scan's transients (estimate/mamba2_scan.h), the largest layer's: its
  // float32 products in the forward (G_intermediate and one more), and in the backward the two
  // gradients of G_intermediate's factors, each a full 6-D product before its reduction.
  uint64_t scan_forward = 0, scan_backward = 0;
  for (const StackLayer& sl : stack_layers) {
    if (o.pp > 1 && sl.index >= stage_layers) break;  // the first stage's layers
    estimate::ActivationParams lp = ap;
    lp.seq = sl.seq;
    lp.cross_seq = sl.cross_seq;
    auto la = estimate::LayerSavedBytes(model, sl.info, *sl.train, lp);
    if (scan == Mamba2Scan::kTorch) {
      if (auto shape = estimate::Mamba2ScanShapeFor(model, sl.info, o.batch, sl.seq, o.tp)) {
        const estimate::Mamba2ScanBytes sb = estimate::Mamba2TorchScanBytes(*shape);
        scan_forward = std::max(scan_forward, sb.forward_peak);
        scan_backward = std::max(scan_backward, sb.backward_peak);
      }
    }
    uint64_t b = la.saved_bytes;
    if (o.checkpointing == Checkpointing::kFull) b = la.input_bytes;
    if (o.checkpointing == Checkpointing::kSelective) b = la.selective_bytes;
    act = Add(act, b);
    if (sl.index < L_enc) encoder_act = Add(encoder_act, b);
    per_layer_max = std::max(per_layer_max, la.saved_bytes);
  }
  act = Mul(act, in_flight);
  // Embedding output: dropout mask, LayerNorm (encoders) and the token ids; an encoder-decoder
  // embeds the encoder's and the decoder's tokens.
  const uint64_t tokens = Mul(o.batch, dec_seq);
  const uint64_t embedded_tokens = enc_dec ? Add(tokens, Mul(o.batch, o.seq)) : tokens;
  const uint64_t embed_mask = o.device == ComputeDevice::kCpu ? ap.stream_bytes : 1;
  act = Add(act, Mul(embedded_tokens,
                     8 + (hp.hidden_dropout > 0 ? embed_mask * hp.hidden_size : 0) +
                         (hp.norm == "layernorm" ? 4 * hp.hidden_size : 0)));
  if (enc_dec) {
    // Each stack's final norm and dropout (T5 final_layer_norm + dropout, modeling_t5.py
    // T5Stack.forward): the norm's saved tensors and the dropout mask; the encoder's output is
    // kept once for every cross-attention's k and v (and the decoder's, scaled, for lm_head).
    const uint64_t h = hp.hidden_size, sb = ap.stream_bytes;
    const uint64_t norm = hp.norm == "layernorm" ? (autocast ? 4 : sb) * h : 4 * h + sb * h;
    const uint64_t per_tok = norm + (hp.hidden_dropout > 0 ? embed_mask * h : 0) + sb * h;
    act = Add(act, Mul(Add(Mul(o.batch, o.seq), tokens), per_tok));
    if (o.checkpointing == Checkpointing::kFull && estimate::PassesPositionBiasToLayers(model)) {
      // The checkpointed blocks' position-bias inputs, one per attention kind, in the compute
      // dtype: encoder self (T_e x T_e), decoder self (T_d x T_d), cross (T_d x T_e; zeros plus
      // the encoder mask). Measured: c-t5l2-lora-bf16-ckpt, `CheckpointFunction > aten::add`.
      const uint64_t heads = CeilDiv(hp.num_attention_heads, o.tp);
      const uint64_t pairs = o.seq * o.seq + dec_seq * dec_seq + dec_seq * o.seq;
      act = Add(act, Mul(Mul(o.batch, heads), Mul(pairs, compute)));
    }
    if (encoder_act > 0) {
      const uint64_t enc_tokens = Mul(o.batch, o.seq);
      const uint64_t embed = 8 + (hp.hidden_dropout > 0 ? embed_mask * h : 0) +
                             (hp.norm == "layernorm" ? 4 * h : 0);
      encoder_act = Add(encoder_act, Mul(enc_tokens, per_tok + embed));
    }
  }
  e.activation_bytes = act;
  e.activation_per_layer_bytes = per_layer_max;
  // Logits and loss.
  TaskHead head = o.head;
  if (head == TaskHead::kAuto) {
    bool has_lm_head = false;
    for (const auto& r : roles) has_lm_head = has_lm_head || (r.tensor->in_head && r.tensor->shape.size() == 2 && r.tensor->shape[0] == hp.vocab_size);
    head = has_lm_head ? TaskHead::kCausalLm : TaskHead::kNone;
    if (head == TaskHead::kCausalLm) e.assumptions.push_back("task: causal LM loss over the vocabulary");
  }
  uint64_t logits_bwd = 0;
  std::optional<uint64_t> logits_at_bwd;  // what of the forward's loss tensors the backward sees
  if (head == TaskHead::kCausalLm && hp.vocab_size) {
    const uint64_t v = CeilDiv(hp.vocab_size, o.tp);
    const uint64_t n = Mul(tokens, v);
    // Encoder-decoder heads (T5, BART, Whisper at transformers 4.48: modeling_t5.py
    // T5ForConditionalGeneration.forward) call CrossEntropyLoss on the logits as they are, like
    // a masked LM: in the compute dtype unless autocast upcasts it (measured: pure bf16
    // c-t5l2-lora-bf16-ckpt, three b x T x V bf16 tensors at the loss backward).
    const bool loss_in_compute_dtype = model.architecture.ends_with("ForMaskedLM") ||
                                       (hp.is_encoder_decoder && !autocast);
    if (loss_in_compute_dtype && o.loss != LossImpl::kFused) {
      // A masked LM (BertForMaskedLM 4.48): CrossEntropyLoss on the logits as they are, in the
      // compute dtype and without a shift: logits and the saved log_softmax in the forward;
      // log_softmax, nll_loss's and log_softmax's gradients at the loss backward (measured:
      // validation/FINDINGS.md 2h).
      e.logits_bytes = Mul(n, 2 * compute);
      logits_bwd = Mul(n, compute);
      e.assumptions.push_back(hp.is_encoder_decoder
                                  ? "task: LM loss over the decoder tokens in the compute dtype"
                                  : "task: masked-LM loss in the compute dtype at every position");
    } else if (o.loss == LossImpl::kHf) {
      // Forward: logits (compute dtype), their fp32 upcast, the saved log_softmax (fp32). At the
      // loss backward three fp32 vocabulary tensors are alive: the saved log_softmax, nll_loss's
      // gradient and log_softmax's gradient (the logits and their upcast are freed by then:
      // measured, FINDINGS.md 2f).
      const uint64_t per = compute + (compute != 4 ? 4 : 0) + 4;
      e.logits_bytes = Mul(n, per);
      // With one sequence the slice logits[..., :-1, :] is already contiguous and
      // `.contiguous()` copies nothing (measured: c-gm-lora-bf16, FINDINGS.md 2o).
      if (LossCopiesShiftedLogits(o.versions) && !hp.is_encoder_decoder && o.batch > 1) {
        // transformers < 4.50: the fp32 copy of the shifted logits, b x (seq - 1) x V, alive with
        // the others at the forward's end (measured: FINDINGS.md 2d). Encoder-decoder heads
        // (T5 modeling_t5.py:1924) call CrossEntropyLoss on the logits unshifted.
        e.logits_bytes = Add(e.logits_bytes, Mul(Mul(o.batch, o.seq - 1), Mul(v, 4)));
        e.assumptions.push_back(fmt::format(
            "transformers {}: the causal-LM loss copies the shifted logits in fp32 (4.50 pads the "
            "labels instead)", LibraryVersionName(o.versions.transformers)));
      }
      // At the loss backward the three fp32 tensors above are all that is left (the logits,
      // their upcast and the shifted copy are freed).
      logits_at_bwd = std::min(e.logits_bytes, Mul(n, 12));
      logits_bwd = Mul(n, 12) - *logits_at_bwd;
      if (model.model_type == "gemma2") {
        // Final-logit soft-capping (Gemma2ForCausalLM: logits / cap, tanh, * cap; the config's
        // final_logit_softcapping, 30 in every Gemma-2): tanh saves its output, in the logits'
        // dtype, until its backward runs after the loss's (measured: FINDINGS.md 2o).
        e.logits_bytes = Add(e.logits_bytes, Mul(n, compute));
        *logits_at_bwd = Add(*logits_at_bwd, Mul(n, compute));
      }
    } else if (o.loss == LossImpl::kLowPrecision) {
      // logits and their log_softmax in the compute dtype; the gradient in the same dtype.
      e.logits_bytes = Mul(Mul(tokens, v), 2 * compute);
      logits_bwd = Mul(Mul(tokens, v), compute);
    } else {
      e.notes.push_back("fused/chunked cross-entropy: no vocabulary-sized tensors");
    }
  } else if (head == TaskHead::kSequenceClassification) {
    e.logits_bytes = Mul(o.batch, Mul(o.num_labels, 12));
  }
  // Transients: backward holds the gradients of one layer's saved tensors at a time, and with
  // checkpointing one recomputed layer as well.
  uint64_t recompute = Add(per_layer_max, o.checkpointing == Checkpointing::kNone ? 0 : per_layer_max);
  uint64_t opt_tmp = 0;
  const bool foreach = o.foreach_optimizer.value_or(ForeachAdamwByDefault(o.versions));
  const bool torch_adam = o.optimizer == Optimizer::kAdamW || o.optimizer == Optimizer::kAdam;
  if (o.offload == Offload::kNone) {
    switch (o.optimizer) {
      case Optimizer::kAdamW: case Optimizer::kAdam: case Optimizer::kPagedAdamW: case Optimizer::kLion:
        // foreach: state-sized temporaries, one in torch 2.x (sqrt, then divided and eps added
        // in place), two in torch 1.x (ForeachAdamwStateCopies). Single tensor:
        // exp_avg_sq.sqrt() and its quotient by bias_correction2_sqrt are alive together, two
        // temporaries of the largest tensor (measured: FINDINGS.md 2a).
        opt_tmp = foreach ? Mul(CeilDiv(Mul(tr.numel, state_b), mp * (deepspeed ? dp : 1)),
                                torch_adam ? ForeachAdamwStateCopies(o.versions) : 1)
                          : Mul(tr.largest, 2 * state_b);
        break;
      case Optimizer::kAdafactor:
        opt_tmp = Mul(tr.largest, 2 * 4);
        break;
      default:
        break;
    }
  }
  // The torch-path Mamba-2 scan's products are transients too (0 with the kernels).
  e.transient_bytes =
      std::max({Add(Add(recompute, logits_bwd), scan_backward), opt_tmp, scan_forward});

  // ---- stages (allocated bytes on the GPU, steady state)
  const bool set_to_none =
      o.zero_grad_set_to_none.value_or(ZeroGradSetsToNoneByDefault(o.versions));
  const bool grads_persist = o.grad_accum > 1 || !set_to_none;
  const uint64_t grads = e.gradients_bytes;
  // Each stage with the parts alive at its peak; a stage's bytes are their sum.
  const auto stage = [&e](std::string name, std::vector<StagePart> parts) {
    StageMemory st{std::move(name), 0, {}};
    for (auto& p : parts) {
      if (p.bytes == 0) continue;
      st.bytes = Add(st.bytes, p.bytes);
      st.parts.push_back(std::move(p));
    }
    e.stages.push_back(std::move(st));
  };
  const uint64_t autocast_part = autocast ? CeilDiv(autocast_copy, mp) : 0;
  const auto with_base = [&](std::vector<StagePart> more) {
    std::vector<StagePart> parts{{"weights", w}, {"master weights", master},
                                 {"optimizer states", e.optimizer_bytes}, {"communication", comm}};
    parts.insert(parts.end(), more.begin(), more.end());
    return parts;
  };
  // The forward's scan transients come on top of every saved tensor and the logits (an upper
  // bound: the last Mamba-2 layer runs before the head).
  const std::vector<StagePart> forward_working{{"activations", act},
                                               {"logits and loss", e.logits_bytes},
                                               {"autocast weight copies", autocast_part},
                                               {"Mamba-2 scan (torch path)", scan_forward}};
  stage("model loaded", {{"weights", w}});
  {
    auto parts = with_base(forward_working);
    parts.push_back({"gradients", grads_persist ? grads : 0});
    stage("forward", std::move(parts));
  }
  // A head tied to the input embedding: at the embedding's backward (the last op) the head's
  // weight gradient, the embedding's dense gradient and their out-of-place sum are alive: two
  // vocabulary x hidden gradients beyond the one kept (measured: FINDINGS.md 2c).
  const uint64_t tied_bwd = CeilDiv(Mul(tied_head_numel, 2 * grad_b), o.tp);
  // The backward's peak is either while the loss's and the layers' gradients are computed (the
  // saved tensors still alive) or at its end (all gradients, plus the tied head's sum).
  std::vector<StagePart> during{{"activations", act},
                                {"logits and loss", logits_at_bwd.value_or(e.logits_bytes)},
                                {"autocast weight copies", autocast_part}};
  during.push_back({"loss backward", logits_bwd});
  during.push_back({"Mamba-2 scan backward (torch path)", scan_backward});
  std::vector<StagePart> at_end{{"gradients", grads}};
  if (grads_persist) {
    during.push_back({"gradients", grads});
    during.push_back({"layer backward and recompute", recompute});
    at_end.push_back({"tied embedding gradients", tied_bwd});
  } else if (recompute >= tied_bwd) {
    at_end.push_back({"layer backward and recompute", recompute});
  } else {
    at_end.push_back({"tied embedding gradients", tied_bwd});
  }
  // The lowest Mamba-2 layer's backward runs when nearly every gradient exists: its scan
  // transient belongs to the end of the backward as much as to its middle.
  at_end.push_back({"Mamba-2 scan backward (torch path)", scan_backward});
  const auto sum = [](const std::vector<StagePart>& parts) {
    uint64_t total = 0;
    for (const auto& p : parts) total = Add(total, p.bytes);
    return total;
  };
  std::vector<StagePart> backward = sum(during) >= sum(at_end) ? during : at_end;
  if (encoder_act > 0 && tied_bwd > 0) {
    // Encoder-decoder with a tied head (T5): the decoder's embedding backward sums the head's
    // and the embedding's gradients while the encoder's saved tensors are still alive and its
    // layers' gradients not yet computed (measured: c-t5l2-tr-fp32-d64, FINDINGS.md 2n).
    std::vector<StagePart> mid{
        {"gradients",
         grads_persist ? grads : grads - std::min(grads, CeilDiv(encoder_layer_grad_bytes, mp))},
        {"tied embedding gradients", tied_bwd},
        {"encoder activations", encoder_act}};
    if (sum(mid) > sum(backward)) backward = std::move(mid);
  }
  stage("backward", with_base(std::move(backward)));
  stage("optimizer step", with_base({{"gradients", grads}, {"optimizer temporaries", opt_tmp}}));
  uint64_t peak = 0;
  for (const auto& st : e.stages) {
    if (st.bytes >= peak) { peak = st.bytes; e.peak_stage = st.stage; }
  }
  e.cuda_context_bytes = o.overhead.cuda_context_bytes;
  e.allocator_reserve_bytes = Scale(peak, o.overhead.allocator_reserve_fraction);
  e.peak_bytes = Add(Add(peak, e.cuda_context_bytes), e.allocator_reserve_bytes);
  if (e.peak_bytes == UINT64_MAX) return MakeError("{}: training estimate overflows", model.name);
  if (o.optimizer == Optimizer::kPagedAdamW || o.optimizer == Optimizer::kPagedAdamW8bit) {
    e.notes.push_back("paged optimizer states live in CUDA unified memory: counted on the GPU, "
                      "paged to CPU RAM only under memory pressure");
  }
  if (o.pp > 1) {
    e.notes.push_back(fmt::format("pipeline: first stage holds {} layers x {} micro-batches in "
                                  "flight (1F1B)", stage_layers, in_flight));
  }
  if (hp.hidden_dropout > 0 || hp.attention_dropout > 0) {
    e.notes.push_back(fmt::format("dropout masks counted (hidden {}, attention {}), {}",
                                  hp.hidden_dropout, hp.attention_dropout,
                                  o.device == ComputeDevice::kCpu
                                      ? "in the input's dtype (torch's CPU dropout)"
                                      : "1 byte per element (CUDA)"));
  }
  return e;
}

}  // namespace

Result<TrainEstimate> EstimateTraining(const Model& model, const TrainOptions& o) {
  const Mamba2Scan scan = o.mamba2_scan.value_or(
      o.device == ComputeDevice::kCpu ? Mamba2Scan::kTorch : Mamba2Scan::kKernels);
  MEMFIT_ASSIGN_OR_RETURN(TrainEstimate e, EstimateTrainingWith(model, o, scan));
  if (estimate::HasMamba2Layers(model)) {
    const Mamba2Scan other = scan == Mamba2Scan::kTorch ? Mamba2Scan::kKernels : Mamba2Scan::kTorch;
    MEMFIT_ASSIGN_OR_RETURN(TrainEstimate alt, EstimateTrainingWith(model, o, other));
    const uint64_t torch_peak = scan == Mamba2Scan::kTorch ? e.peak_bytes : alt.peak_bytes;
    const uint64_t kernel_peak = scan == Mamba2Scan::kTorch ? alt.peak_bytes : e.peak_bytes;
    e.assumptions.push_back(estimate::Mamba2ScanAssumption(
        scan, model.hp.ssm_chunk_size, torch_peak - std::min(torch_peak, kernel_peak)));
  }
  return e;
}

}  // namespace memfit
