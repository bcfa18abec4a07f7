// `memfit validate`'s planner for training rows: the row's words as `memfit train`'s flags (the
// same TrainRequest, the same options); what no flag says (the harness's explicit
// zero_grad(set_to_none=True) and foreach=True, the CPU device) is set on the options after
// (docs/accuracy.md, "Row settings").

#include <cstdlib>

#include <fmt/format.h>

#include "memfit/quantization.h"
#include "memfit/validation.h"
#include "request/request_options.h"
#include "request/validation_detail.h"

namespace memfit::validation_detail {
namespace {

// precision, or the dtype word's: the precision the row trained in; false with `why` set.
bool TakeTrainPrecision(RowSettings& s, const RowContext& c, TrainRequest& q, std::string& why) {
  const std::string precision = s.Take("precision");
  if (!c.dtype_word.empty()) {
    // A training row's dtype is the weights' (HF Trainer without fp16/bf16: fp32).
    const Dtype d = *ParseDtypeName(c.dtype_word);
    q.precision = d == Dtype::kF32 ? "fp32" : d == Dtype::kF16 ? "fp16-mixed" : "bf16-mixed";
  }
  if (precision.empty()) return true;
  // HF Trainer's bf16=True is autocast (bf16-mixed), not pure bf16; memfit's own harness
  // (validation/measure.py, device=...) writes bf16-mixed for autocast and bf16 for pure bf16.
  const bool harness = !s.Peek("device").empty();
  q.precision = precision == "bf16" && !harness ? "bf16-mixed" : precision;
  return Check("precision", precision, ParsePrecision(q.precision), why);
}

// method: full, lora or qlora, then optionally a rank "(rN)" and words after a space
// ("lora(r16) DPO (TRL)": the published rows' spelling); rank and alpha (validation/measure.py).
bool TakeTrainMethod(RowSettings& s, TrainRequest& q, bool& dpo, std::string& why) {
  const std::string method = s.Take("method");
  dpo = method.find("DPO") != std::string::npos;
  if (method.empty() || method == "full") q.method = "full";
  else if (method.starts_with("qlora")) q.method = "qlora";
  else if (method.starts_with("lora")) q.method = "lora";
  const std::string rest = method.size() > q.method.size() ? method.substr(q.method.size()) : "";
  if ((!method.empty() && !method.starts_with(q.method)) ||
      (!rest.empty() && !rest.starts_with("(r") && !rest.starts_with(" "))) {
    why = NotExpressible("method", method, "expected full, lora or qlora");
    return false;
  }
  if (rest.starts_with("(r")) {
    q.lora_rank = std::strtoull(rest.c_str() + 2, nullptr, 10);
    if (q.lora_rank == 0) {
      why = NotExpressible("method", method, "LoRA rank");
      return false;
    }
  }
  if (!TakeCount(s, "rank", q.lora_rank, why)) return false;
  if (s.Has("alpha")) {  // PEFT's lora_alpha: scales the update, no bytes (--lora-alpha)
    const std::string a = s.Take("alpha");
    char* end = nullptr;
    const double alpha = std::strtod(a.c_str(), &end);
    if (a.empty() || *end != '\0' || !(alpha > 0)) {
      why = NotExpressible("alpha", a, "not a positive number");
      return false;
    }
    q.lora_alpha = alpha;
  }
  return true;
}

// The batch, sequence and parallel layout. Megatron's words, where they are memfit's:
// micro_batch is --micro-batch (--batch), and the data-parallel degree dp with tp and pp makes
// --gpus.
bool TakeTrainShape(RowSettings& s, TrainRequest& q, std::string& why) {
  uint64_t micro_batch = 0, dp = 0;
  if (!TakeCount(s, "batch", q.batch, why) || !TakeCount(s, "micro_batch", micro_batch, why) ||
      !TakeCount(s, "grad_accum", q.grad_accum, why) || !TakeCount(s, "gpus", q.gpus, why) ||
      !TakeCount(s, "tp", q.tp, why) || !TakeCount(s, "pp", q.pp, why) ||
      !TakeCount(s, "dp", dp, why) || !TakeCount(s, "seq", q.context, why) ||
      !TakeCount(s, "decoder_tokens", q.decoder_tokens, why)) {
    return false;
  }
  if (micro_batch) {
    if (s.Has("batch") && q.batch != micro_batch) {
      why = NotExpressible("micro_batch", s.Peek("micro_batch"),
                           "disagrees with batch=" + s.Peek("batch"));
      return false;
    }
    q.batch = micro_batch;
  }
  if (dp) {
    const uint64_t gpus = dp * q.tp * q.pp;
    if (s.Has("gpus") && q.gpus != gpus) {
      why = NotExpressible("dp", s.Peek("dp"),
                           fmt::format("dp x tp x pp = {} but gpus={}", gpus, q.gpus));
      return false;
    }
    q.gpus = gpus;
  }
  if (q.context == 0) {
    why = "sequence length not given";
    return false;
  }
  return true;
}

// trainer and foreach: how the optimizer steps and what it keeps between steps.
bool TakeTrainLoop(RowSettings& s, TrainRequest& q, std::optional<bool>& foreach,
                   std::string& why) {
  // Rows from transformers' older docs (torch 1.x era) predate SDPA (eager attention), kept
  // zeroed gradients between steps (zero_grad(set_to_none=False)) and stepped AdamW per tensor.
  if (s.Has("trainer")) {
    const std::string trainer = s.Take("trainer");
    if (trainer != "hf") {
      why = NotExpressible("trainer", trainer, "expected hf (transformers' Trainer, torch 1.x "
                           "era docs)");
      return false;
    }
    q.attn = "eager";
    q.keep_grads = true;
    q.no_foreach = true;
  }
  if (s.Has("foreach")) {  // validation/measure.py: AdamW(foreach=...)
    const std::string x = s.Take("foreach");
    if (x != "true" && x != "false") {
      why = NotExpressible("foreach", x, "expected true or false");
      return false;
    }
    foreach = x == "true";
    q.no_foreach = x == "false";
  }
  return true;
}

// The flags whose words the row spells as memfit does, each checked by its flag's parser.
bool TakeTrainFlags(RowSettings& s, TrainRequest& q, std::string& why) {
  if (!TakeParsed(s, "attn", q.attn, ParseAttnImpl, why) ||
      !TakeParsed(s, "strategy", q.strategy, ParseStrategy, why) ||
      !TakeParsed(s, "offload", q.offload, ParseOffload, why) ||
      !TakeParsed(s, "head", q.head, ParseTaskHead, why)) {
    return false;
  }
  if (!s.Has("quant")) return true;
  // The base model's quantization: QLoRA's (--qlora-quant); other methods train 16/32-bit weights.
  const std::string quant = s.Take("quant");
  if (q.method != "qlora") {
    why = NotExpressible("quant", quant, "only a QLoRA base is quantized in training");
    return false;
  }
  q.qlora_quant = quant.starts_with("bnb-") ? quant.substr(4) : quant;
  return Check("quant", quant, ParseQuant(q.qlora_quant), why);
}

// What a row that names neither precision nor dtype, or a DPO run, implies; said in the note.
void ApplyTrainAssumptions(const RowSettings& s, const RowContext& c, bool dpo, TrainRequest& q,
                           RowPlan& p) {
  if (dpo) {
    q.batch *= 2;  // chosen and rejected sequences go through the model together
    q.loss = "low-precision";  // TRL selective_log_softmax in bf16
    p.model_alias_note = "DPO: chosen + rejected concatenated (batch x 2), bf16 log_softmax (TRL); "
                         "the reference model is the base with adapters disabled";
  }
  if (!s.Peek("precision").empty() || !c.dtype_word.empty()) return;
  q.precision = "bf16-mixed";
  p.model_alias_note += (p.model_alias_note.empty() ? "" : "; ") +
                        std::string("precision not given: bf16-mixed assumed");
  if (q.method == "lora" && q.checkpointing == "none" && s.Peek("attn") == "flash2") {
    q.checkpointing = "full";
    p.model_alias_note += "; gradient checkpointing assumed (LongLoRA's training scripts)";
  }
}

// A train row's memory after load: the weights alone, as the run loads them (validation/measure.py
// records them before training): the row's dtype, else its precision's (bf16 pure; fp32 for fp32
// and the autocast precisions, which keep float32 weights).
void PlanTrainLoadRow(const RowContext& c, const TrainRequest& q, RowPlan& p) {
  p.kind = "load";
  p.row_class = RowClass::kLoad;
  p.tolerance = p.rough ? 0.30 : 0.05;
  InferenceRequest w;
  w.quant = q.method == "qlora" ? q.qlora_quant : "stored";
  w.dtype = !c.dtype_word.empty() ? c.dtype_word : q.precision == "bf16" ? "bfloat16" : "float32";
  w.torch_version = c.torch_version;  // the model is built with the row's release's buffers
  w.transformers_version = c.transformers_version;
  auto weights = InferenceOptionsFor(w);
  if (!weights) {
    p.unsupported = "not expressible: " + weights.error().message;
    return;
  }
  p.inference = *weights;
  p.dtype = p.inference.dtype;
}

}  // namespace

void PlanTrainRow(const MeasuredRow& row, RowSettings& s, const RowContext& c, RowPlan& p) {
  TrainRequest& q = p.train_request.emplace();
  q.torch_version = c.torch_version;
  q.transformers_version = c.transformers_version;
  bool dpo = false;
  std::optional<bool> foreach;
  // In the order the keys are checked, so a row's first bad key is the one named.
  std::string& why = p.unsupported;
  if (!TakeTrainPrecision(s, c, q, why) || !TakeTrainMethod(s, q, dpo, why) ||
      !TakeParsed(s, "optimizer", q.optimizer, ParseOptimizer, why) ||
      !TakeTrainShape(s, q, why) ||
      !TakeParsed(s, "checkpointing", q.checkpointing, ParseCheckpointing, why) ||
      !TakeTrainLoop(s, q, foreach, why)) {
    return;
  }
  // nvidia-smi / nvml readings include what the caching allocator holds beyond the peak.
  // ("reported" figures come from unknown tooling: allocated-only, no reserve).
  if (row.measure == "nvml_used" || row.measure == "nvidia_smi") {
    q.allocator_reserve = kNvmlAllocatorReserve;
  }
  if (!TakeTrainFlags(s, q, why)) return;
  if (c.cpu) q.mamba_scan = "torch";  // no mamba_ssm kernels on CPU
  ApplyTrainAssumptions(s, c, dpo, q, p);
  auto options = TrainOptionsFor(q);
  if (!options) {
    p.unsupported = "not expressible: " + options.error().message;
    return;
  }
  p.train = *options;
  if (!s.Peek("device").empty()) {
    // validation/measure.py calls opt.zero_grad(set_to_none=True) whatever torch's default.
    p.train.zero_grad_set_to_none = true;
    if (c.cpu) p.train.device = ComputeDevice::kCpu;
  }
  if (foreach) p.train.foreach_optimizer = *foreach;
  if (row.measure == "memory_after_load") PlanTrainLoadRow(c, q, p);
}

}  // namespace memfit::validation_detail
