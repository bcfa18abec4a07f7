// The training estimate's stages over the passes (estimate/training_stages.h): the activations
// the forward saves per layer, the logits and loss, the backward's working set and peak, and the
// optimizer step's temporaries. The model states are in training_states.cc. docs/estimates.md,
// "Training".

#include "estimate/training_stages.h"

#include <algorithm>

#include <fmt/format.h>

#include "estimate/mamba2_scan.h"
#include "estimate/prefill_terms.h"
#include "estimate/saturating_math.h"
#include "memfit/checked_math.h"
#include "memfit/units.h"

namespace memfit::estimate {
namespace {

using saturating::Add;
using saturating::Mul;

// The bytes of the parts alive at one moment of the backward.
uint64_t SumOfStageParts(const std::vector<StagePart>& parts) {
  uint64_t total = 0;
  for (const auto& p : parts) total = Add({total, p.bytes});
  return total;
}

}  // namespace

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
    // Causal LMs that call CrossEntropyLoss themselves on `lm_logits[:, :-1, :].contiguous()`
    // (a copy in the logits' dtype, none with one sequence), without ForCausalLMLoss's float32
    // upcast: the log_softmax in the compute dtype unless autocast upcasts it (measured:
    // s-nx-lora64-bf16-2x1024, +88% against the float32 loss).
    const bool own_loss = OwnCausalLmLoss(model.model_type, o.versions);
    const uint64_t own_shift = own_loss && o.batch > 1 ? Mul({o.batch, o.seq - 1, v, compute}) : 0;
    const uint64_t log_softmax = own_loss && !r.autocast ? compute : 4;
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
      const uint64_t upcast = compute != 4 && (!own_loss || r.autocast) ? 4 : 0;
      // GPT-J and CodeGen upcast in their forward, `self.lm_head(hidden_states).to(
      // torch.float32)`: the compute-dtype logits are a temporary, freed before the loss
      // (measured: s-gj-lora64-bf16-2x1024, three float32 vocabulary tensors at the loss).
      const uint64_t in_compute = upcast > 0 && UpcastsEveryLogit(model.model_type) ? 0 : compute;
      const uint64_t per = in_compute + upcast + log_softmax;
      out.forward_bytes = Mul({n, per});
      // With one sequence the slice logits[..., :-1, :] is already contiguous and
      // `.contiguous()` copies nothing (measured: c-gm-lora-bf16, FINDINGS.md 2o).
      if (own_loss) {
        out.forward_bytes = Add({out.forward_bytes, own_shift});  // autocast: the copy in c
      } else if (LossCopiesShiftedLogits(o.versions) && !hp.is_encoder_decoder && o.batch > 1) {
        // transformers < 4.50: the fp32 copy of the shifted logits, b x (seq - 1) x V, alive with
        // the others at the forward's end (measured: FINDINGS.md 2d). Encoder-decoder heads
        // (T5 modeling_t5.py:1924) call CrossEntropyLoss on the logits unshifted.
        out.forward_bytes = Add({out.forward_bytes, Mul({o.batch, o.seq - 1, v, 4})});
        out.messages.assumptions.push_back(fmt::format(
            "transformers {}: the causal-LM loss copies the shifted logits in fp32 (4.50 pads the "
            "labels instead)", LibraryVersionName(o.versions.transformers)));
      }
      // At the loss backward the three tensors above (fp32, or the compute dtype's for an own
      // loss without autocast) are all that is left (the logits, their upcast and the shifted
      // copy are freed).
      const uint64_t at_loss_backward = Mul({n, 3 * log_softmax});
      out.at_backward_bytes = std::min(out.forward_bytes, at_loss_backward);
      out.backward_extra_bytes = at_loss_backward - *out.at_backward_bytes;
      if (own_loss && !r.autocast) {
        out.messages.assumptions.push_back(
            "task: causal LM loss in the compute dtype (the class's own CrossEntropyLoss)");
      }
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
  // QLoRA: bitsandbytes' MatMul4Bit.backward dequantizes its weight to the gradient's dtype for
  // grad_A = grad_output @ W (autograd/_functions.py), one linear at a time.
  w.layer_bytes = Add({a.per_layer_max_bytes,
                       r.checkpointing == Checkpointing::kNone ? 0 : a.per_layer_max_bytes,
                       CeilDiv(Mul({t.dequantized_weight_numel, r.compute_bytes}), o.tp)});
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
    if (SumOfStageParts(moments[i]) > SumOfStageParts(moments[peak])) peak = i;
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
