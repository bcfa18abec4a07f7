// `memfit validate`'s row planner: a measured row's settings -> the typed request `memfit
// inference` / `memfit train` builds from the same words (memfit/requests.h), every key applied
// or named as not expressible (docs/accuracy.md, "Row settings").

#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "memfit/quantization.h"
#include "memfit/units.h"
#include "memfit/validation.h"
#include "request/request_options.h"
#include "request/validation_detail.h"

namespace memfit {

namespace validation_detail {

std::string NotExpressible(std::string_view key, std::string_view value, std::string_view why) {
  const std::string setting = value.empty() ? std::string(key) : fmt::format("{}={}", key, value);
  return fmt::format("not expressible: {} ({})", setting, why);
}

}  // namespace validation_detail

namespace {

using validation_detail::NotExpressible;
using validation_detail::ToUint;
using validation_detail::UnitBytes;

// The library versions a row names in its source column, as validation/measure.py writes them:
// "validation/measure.py (torch 1.13.0a0, transformers 4.48.3, peft 0.14.0)". A library the
// source does not name keeps memfit's default (the current release).
RuntimeVersions RowVersions(std::string_view source) {
  RuntimeVersions v;
  auto read = [&](std::string_view name, LibraryVersion& out) {
    for (size_t at = source.find(name); at != std::string_view::npos;
         at = source.find(name, at + 1)) {
      const bool word_start = at == 0 || source[at - 1] == '(' || source[at - 1] == ' ' ||
                              source[at - 1] == ',';
      if (!word_start) continue;
      std::string_view rest = source.substr(at + name.size());
      rest = rest.substr(0, rest.find_first_of(",) ;"));
      if (auto parsed = ParseLibraryVersion(rest, name)) out = *parsed;
      return;
    }
  };
  read("torch ", v.torch);
  read("transformers ", v.transformers);
  return v;
}

// RowVersions as --torch-version / --transformers-version words.
struct VersionWords {
  std::string torch, transformers;
};


// A row's settings, each key marked when it is applied to the plan: a key left unmarked makes the
// row "not expressible" with the key named, so no setting is silently dropped (docs/accuracy.md,
// "Row settings").
class RowSettings {
 public:
  explicit RowSettings(const std::map<std::string, std::string>& settings) : settings_(settings) {}
  bool Has(std::string_view key) const { return settings_.count(std::string(key)) > 0; }
  // The value (empty when absent), not marked: the caller decides on it elsewhere.
  std::string Peek(std::string_view key) const {
    auto it = settings_.find(std::string(key));
    return it == settings_.end() ? "" : it->second;
  }
  // The value (empty when absent), marked as applied.
  std::string Take(std::string_view key) {
    if (Has(key)) applied_.insert(std::string(key));
    return Peek(key);
  }
  // "key=value" of every key not applied, in key order.
  std::vector<std::string> Unapplied() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : settings_) {
      if (!applied_.count(k)) out.push_back(v.empty() ? k : k + "=" + v);
    }
    return out;
  }

 private:
  const std::map<std::string, std::string>& settings_;
  std::set<std::string> applied_;
};

// A positive integer setting into `out` (absent: `out` unchanged); false with `why` set when the
// value is not one.
bool TakeCount(RowSettings& s, std::string_view key, uint64_t& out, std::string& why) {
  if (!s.Has(key)) return true;
  const std::string v = s.Take(key);
  auto n = ToUint(v);
  if (!n || *n == 0) {
    why = NotExpressible(key, v, "not a positive integer");
    return false;
  }
  out = *n;
  return true;
}

// A value checked by the parser of the flag it becomes; false with `why` naming key and value.
template <typename Parsed>
bool Check(std::string_view key, std::string_view value, const Result<Parsed>& parsed,
           std::string& why) {
  if (parsed) return true;
  why = NotExpressible(key, value, parsed.error().message);
  return false;
}

// Keys that describe where or how a row was measured and change no allocated byte memfit
// estimates, each with the reason (docs/accuracy.md, "Row settings"). `gpu`: the per-GPU bytes
// of a transformers run do not depend on the GPU model (memfit's --gpu gives only the verdict);
// `op`: the operation that created the CUDA context of a context row; `plain_pytorch`: a plain
// PyTorch loop, which is what memfit's defaults model.
bool TakeRecorded(RowSettings& s, std::string& why) {
  s.Take("gpu");
  if (s.Has("plain_pytorch") && !s.Take("plain_pytorch").empty()) {
    why = NotExpressible("plain_pytorch", s.Peek("plain_pytorch"), "a marker without a value");
    return false;
  }
  return true;
}

// `device`: cpu (CPU dropout masks, the torch scan of Mamba-2 mixers, the CPU allocator) or
// cuda (memfit's default).
bool TakeDevice(RowSettings& s, bool& cpu, std::string& why) {
  if (!s.Has("device")) return true;
  const std::string d = s.Take("device");
  if (d != "cpu" && d != "cuda") {
    why = NotExpressible("device", d, "expected cpu or cuda");
    return false;
  }
  cpu = d == "cpu";
  return true;
}

// transformers' bitsandbytes quantizers load what they leave unquantized in float16 when no
// torch_dtype is given (update_torch_dtype); without a quantization from_pretrained's default
// is float32.
Dtype DefaultLoadDtype(const QuantOptions& quant) {
  const bool bnb = quant.scheme == QuantScheme::kBnbInt8 || quant.scheme == QuantScheme::kBnbNf4 ||
                   quant.scheme == QuantScheme::kBnbFp4;
  return bnb ? Dtype::kF16 : Dtype::kF32;
}

// A load row (task=load, or the memory after load of a measured run): the weights as
// `memfit inference --dtype D --quant Q` prepares them (InferenceOptionsFor,
// PrepareInferenceWeights).
void PlanLoadWeights(RowSettings& s, const std::string& dtype_word, RowPlan& p) {
  InferenceRequest q;
  if (s.Has("quant")) {
    q.quant = s.Take("quant");
    if (!Check("quant", q.quant, ParseQuant(q.quant), p.unsupported)) return;
  } else {
    q.quant = "stored";  // from_pretrained keeps what the checkpoint stores quantized
  }
  if (!dtype_word.empty()) {
    q.dtype = dtype_word;
  } else {
    q.dtype = std::string(TorchDtypeName(DefaultLoadDtype(*ParseQuant(q.quant))));
  }
  auto options = InferenceOptionsFor(q);
  if (!options) { p.unsupported = "not expressible: " + options.error().message; return; }
  p.inference = *options;
  p.dtype = p.inference.dtype;
}

RowPlan PlanRowSettings(const MeasuredRow& row, RowSettings& s) {
  RowPlan p;
  auto unit = UnitBytes(row.unit);
  std::string v = row.value;
  size_t dash = v.find('-');
  double lo = std::strtod(v.c_str(), nullptr);
  double hi = lo;
  if (dash != std::string::npos && dash > 0) hi = std::strtod(v.c_str() + dash + 1, nullptr);
  if (!unit || !(lo > 0) || !(hi >= lo)) {
    p.unsupported = fmt::format("value \"{}\" {} is not a byte size memfit reads", row.value, row.unit);
    return p;
  }
  p.measured_lo = lo * *unit;
  p.measured_hi = hi * *unit;
  p.rough = hi > lo || row.measure == "reported" || row.measure == "nvidia_smi" ||
            row.measure == "measured";
  // PyTorch's counters exclude the CUDA context; nvml / nvidia-smi figures include it.
  p.include_context = row.measure != "max_memory_allocated" && row.measure != "vllm_profiler" &&
                      row.measure != "memory_after_load";
  // Rows from validation/measure.py: the per-stage peaks and the reserved figure are kept in the
  // CSV for reference; the allocated peak and the memory after load are what memfit predicts.
  if (row.measure == "peak_forward" || row.measure == "peak_backward" ||
      row.measure == "max_memory_reserved") {
    p.unsupported = "measure " + row.measure + " is recorded for reference; memfit compares "
                    "max_memory_allocated and memory_after_load";
    return p;
  }
  if (row.task == "context") {
    p.kind = "context";
    p.row_class = RowClass::kLoad;
    p.calibration = true;
  } else if (row.task == "load") {
    p.kind = "load";
    p.row_class = RowClass::kLoad;
  } else if (row.task == "inference") {
    p.kind = "inference";
    p.row_class = RowClass::kInference;
  } else if (row.task == "train") {
    p.kind = "train";
    p.row_class = RowClass::kTraining;
  } else {
    p.unsupported = "task \"" + row.task + "\" is not load, inference, train or context";
    return p;
  }
  p.tolerance = p.rough ? 0.30 : (p.row_class == RowClass::kTraining ? 0.10 : 0.05);
  // Each row is estimated with the torch / transformers releases it was measured with.
  p.inference.versions = RowVersions(row.source);
  p.train.versions = p.inference.versions;
  const VersionWords versions{LibraryVersionName(p.inference.versions.torch),
                              LibraryVersionName(p.inference.versions.transformers)};
  if (row.measure == "llama_log" || s.Peek("format") == "gguf" ||
      s.Peek("engine").starts_with("llama.cpp")) {
    p.unsupported = "llama.cpp / GGUF row: estimated by the GGUF estimator, not by inference/train";
    return p;
  }
  if (s.Peek("framework") == "megatron") {
    p.unsupported = "Megatron-LM run (distributed optimizer, its own activation layout and "
                    "buffers; sequence length not given): not modelled";
    return p;
  }
  if (!TakeRecorded(s, p.unsupported)) return p;
  bool cpu = false;
  if (!TakeDevice(s, cpu, p.unsupported)) return p;
  if (p.kind == "context") {
    s.Take("op");  // the operation that created the context (recorded)
    return p;
  }
  // A dtype word, checked (the row's own message, without a flag's name).
  std::string dtype_word;
  if (s.Has("dtype")) {
    dtype_word = s.Take("dtype");
    if (!Check("dtype", dtype_word, ParseDtypeName(dtype_word), p.unsupported)) return p;
  }
  if (p.kind == "load") {
    if (s.Has("head")) {
      p.head = s.Take("head");
      auto head = ParseTaskHead(p.head);
      if (!Check("head", p.head, head, p.unsupported)) return p;
      if (*head == TaskHead::kAuto) p.head.clear();
    }
    PlanLoadWeights(s, dtype_word, p);
    return p;
  }
  if (p.kind == "inference") {
    // The row's words are `memfit inference`'s flags (the same InferenceRequest, the same
    // options).
    InferenceRequest& q = p.inference_request.emplace();
    const std::string engine = s.Take("engine");
    q.engine = engine.empty() ? "transformers" : engine;
    if (!Check("engine", engine, ParseEngine(q.engine), p.unsupported)) return p;
    if (q.engine != "transformers" && q.engine != "vllm") {
      p.unsupported = NotExpressible("engine", engine, "memfit validate compares transformers "
                                     "runs and vLLM's weights line");
      return p;
    }
    q.torch_version = versions.torch;
    q.transformers_version = versions.transformers;
    // Encoder-decoder models whose prompt is the encoder's (T5): generate() feeds the start
    // token and decode - 1 generated tokens to the decoder, so its cache holds `decode` tokens.
    if (!TakeCount(s, "context", q.context, p.unsupported) ||
        !TakeCount(s, "batch", q.batch, p.unsupported) ||
        !TakeCount(s, "decode", q.decoder_tokens, p.unsupported)) {
      return p;
    }
    if (!dtype_word.empty()) q.dtype = dtype_word;
    if (s.Has("quant")) {
      q.quant = s.Take("quant");
      if (!Check("quant", q.quant, ParseQuant(q.quant), p.unsupported)) return p;
    }
    if (s.Has("attn")) {
      q.attn = s.Take("attn");
      if (!Check("attn", q.attn, ParseAttnImpl(q.attn), p.unsupported)) return p;
    }
    // The GPU's memory (a vLLM run's budget; the verdict's GPU for transformers).
    if (s.Has("gpu_memory_total")) {
      q.gpu_memory = s.Take("gpu_memory_total");
      if (!Check("gpu_memory_total", q.gpu_memory, ParseByteSize(q.gpu_memory), p.unsupported)) {
        return p;
      }
    }
    // On CPU transformers' Mamba-2 mixers have no mamba_ssm kernels: the torch path.
    if (cpu) q.mamba_scan = "torch";
    auto options = InferenceOptionsFor(q);
    if (!options) { p.unsupported = "not expressible: " + options.error().message; return p; }
    // A row without a context keeps the estimator's own default (the request's 0 would be the
    // model's, chosen when the request is run).
    if (q.context == 0) options->context_tokens = InferenceOptions{}.context_tokens;
    else options->context_tokens = q.context;
    p.inference = *options;
    if (q.engine == "vllm") {
      // The profiler's "weights" line: the weights as vLLM loads them, in the config's dtype
      // unless the row names one (EvaluateRow).
      p.kind = "inference-weights";
      p.weights_in_config_dtype = dtype_word.empty();
    }
    if (row.measure == "memory_after_load") {
      // The weights alone (validation/measure.py records them before the run).
      p.kind = "load";
      p.row_class = RowClass::kLoad;
      p.tolerance = p.rough ? 0.30 : 0.05;
      p.dtype = p.inference.dtype;
    }
    return p;
  }
  // The row's words as `memfit train`'s flags (the same TrainRequest, the same options); what no
  // flag says (the harness's explicit zero_grad(set_to_none=True) and foreach=True, the CPU
  // device) is set on the options after.
  TrainRequest& q = p.train_request.emplace();
  q.torch_version = versions.torch;
  q.transformers_version = versions.transformers;
  const std::string precision = s.Take("precision");
  if (!dtype_word.empty()) {
    // A training row's dtype is the weights' (HF Trainer without fp16/bf16: fp32).
    const Dtype d = *ParseDtypeName(dtype_word);
    q.precision = d == Dtype::kF32 ? "fp32" : d == Dtype::kF16 ? "fp16-mixed" : "bf16-mixed";
  }
  if (!precision.empty()) {
    // HF Trainer's bf16=True is autocast (bf16-mixed), not pure bf16; memfit's own harness
    // (validation/measure.py, device=...) writes bf16-mixed for autocast and bf16 for pure bf16.
    const bool harness = !s.Peek("device").empty();
    q.precision = precision == "bf16" && !harness ? "bf16-mixed" : precision;
    if (!Check("precision", precision, ParsePrecision(q.precision), p.unsupported)) return p;
  }
  // full, lora or qlora, then optionally a rank "(rN)" and words after a space ("lora(r16) DPO
  // (TRL)": the published rows' spelling).
  const std::string method = s.Take("method");
  const bool dpo = method.find("DPO") != std::string::npos;
  if (method.empty() || method == "full") q.method = "full";
  else if (method.starts_with("qlora")) q.method = "qlora";
  else if (method.starts_with("lora")) q.method = "lora";
  const std::string rest = method.size() > q.method.size() ? method.substr(q.method.size()) : "";
  if ((!method.empty() && !method.starts_with(q.method)) ||
      (!rest.empty() && !rest.starts_with("(r") && !rest.starts_with(" "))) {
    p.unsupported = NotExpressible("method", method, "expected full, lora or qlora");
    return p;
  }
  if (rest.starts_with("(r")) {
    q.lora_rank = std::strtoull(rest.c_str() + 2, nullptr, 10);
    if (q.lora_rank == 0) { p.unsupported = NotExpressible("method", method, "LoRA rank"); return p; }
  }
  if (!TakeCount(s, "rank", q.lora_rank, p.unsupported)) return p;  // validation/measure.py
  if (s.Has("alpha")) {  // PEFT's lora_alpha: scales the update, no bytes (--lora-alpha)
    const std::string a = s.Take("alpha");
    char* end = nullptr;
    const double alpha = std::strtod(a.c_str(), &end);
    if (a.empty() || *end != '\0' || !(alpha > 0)) {
      p.unsupported = NotExpressible("alpha", a, "not a positive number");
      return p;
    }
    q.lora_alpha = alpha;
  }
  if (s.Has("optimizer")) {
    q.optimizer = s.Take("optimizer");
    if (!Check("optimizer", q.optimizer, ParseOptimizer(q.optimizer), p.unsupported)) return p;
  }
  // Megatron's words, where they are memfit's: micro_batch is --micro-batch (--batch), and the
  // data-parallel degree dp with tp and pp makes --gpus.
  uint64_t micro_batch = 0, dp = 0;
  if (!TakeCount(s, "batch", q.batch, p.unsupported) ||
      !TakeCount(s, "micro_batch", micro_batch, p.unsupported) ||
      !TakeCount(s, "grad_accum", q.grad_accum, p.unsupported) ||
      !TakeCount(s, "gpus", q.gpus, p.unsupported) ||
      !TakeCount(s, "tp", q.tp, p.unsupported) || !TakeCount(s, "pp", q.pp, p.unsupported) ||
      !TakeCount(s, "dp", dp, p.unsupported) || !TakeCount(s, "seq", q.context, p.unsupported) ||
      !TakeCount(s, "decoder_tokens", q.decoder_tokens, p.unsupported)) {
    return p;
  }
  if (micro_batch) {
    if (s.Has("batch") && q.batch != micro_batch) {
      p.unsupported = NotExpressible("micro_batch", s.Peek("micro_batch"),
                                     "disagrees with batch=" + s.Peek("batch"));
      return p;
    }
    q.batch = micro_batch;
  }
  if (dp) {
    const uint64_t gpus = dp * q.tp * q.pp;
    if (s.Has("gpus") && q.gpus != gpus) {
      p.unsupported = NotExpressible("dp", s.Peek("dp"),
                                     fmt::format("dp x tp x pp = {} but gpus={}", gpus, q.gpus));
      return p;
    }
    q.gpus = gpus;
  }
  if (q.context == 0) {
    p.unsupported = "sequence length not given";
    return p;
  }
  if (s.Has("checkpointing")) {
    q.checkpointing = s.Take("checkpointing");
    if (!Check("checkpointing", q.checkpointing, ParseCheckpointing(q.checkpointing),
               p.unsupported)) {
      return p;
    }
  }
  // Rows from transformers' older docs (torch 1.x era) predate SDPA (eager attention), kept
  // zeroed gradients between steps (zero_grad(set_to_none=False)) and stepped AdamW per tensor.
  if (s.Has("trainer")) {
    const std::string trainer = s.Take("trainer");
    if (trainer != "hf") {
      p.unsupported = NotExpressible("trainer", trainer, "expected hf (transformers' Trainer, "
                                     "torch 1.x era docs)");
      return p;
    }
    q.attn = "eager";
    q.keep_grads = true;
    q.no_foreach = true;
  }
  std::optional<bool> foreach;
  if (s.Has("foreach")) {  // validation/measure.py: AdamW(foreach=...)
    const std::string x = s.Take("foreach");
    if (x != "true" && x != "false") {
      p.unsupported = NotExpressible("foreach", x, "expected true or false");
      return p;
    }
    foreach = x == "true";
    q.no_foreach = x == "false";
  }
  // nvidia-smi / nvml readings include what the caching allocator holds beyond the peak.
  // ("reported" figures come from unknown tooling: allocated-only, no reserve).
  if (row.measure == "nvml_used" || row.measure == "nvidia_smi") {
    q.allocator_reserve = kNvmlAllocatorReserve;
  }
  if (s.Has("attn")) {
    q.attn = s.Take("attn");
    if (!Check("attn", q.attn, ParseAttnImpl(q.attn), p.unsupported)) return p;
  }
  if (cpu) q.mamba_scan = "torch";  // no mamba_ssm kernels on CPU
  if (s.Has("strategy")) {
    q.strategy = s.Take("strategy");
    if (!Check("strategy", q.strategy, ParseStrategy(q.strategy), p.unsupported)) return p;
  }
  if (s.Has("offload")) {
    q.offload = s.Take("offload");
    if (!Check("offload", q.offload, ParseOffload(q.offload), p.unsupported)) return p;
  }
  if (s.Has("head")) {
    q.head = s.Take("head");
    if (!Check("head", q.head, ParseTaskHead(q.head), p.unsupported)) return p;
  }
  if (s.Has("quant")) {
    // The base model's quantization: QLoRA's (--qlora-quant); other methods train 16/32-bit
    // weights.
    const std::string quant = s.Take("quant");
    if (q.method != "qlora") {
      p.unsupported = NotExpressible("quant", quant, "only a QLoRA base is quantized in training");
      return p;
    }
    q.qlora_quant = quant.starts_with("bnb-") ? quant.substr(4) : quant;
    if (!Check("quant", quant, ParseQuant(q.qlora_quant), p.unsupported)) return p;
  }
  if (dpo) {
    q.batch *= 2;  // chosen and rejected sequences go through the model together
    q.loss = "low-precision";  // TRL selective_log_softmax in bf16
    p.model_alias_note = "DPO: chosen + rejected concatenated (batch x 2), bf16 log_softmax (TRL); "
                         "the reference model is the base with adapters disabled";
  }
  if (precision.empty() && dtype_word.empty()) {
    q.precision = "bf16-mixed";
    p.model_alias_note += (p.model_alias_note.empty() ? "" : "; ") +
                          std::string("precision not given: bf16-mixed assumed");
    if (q.method == "lora" && q.checkpointing == "none" && s.Peek("attn") == "flash2") {
      q.checkpointing = "full";
      p.model_alias_note += "; gradient checkpointing assumed (LongLoRA's training scripts)";
    }
  }
  auto options = TrainOptionsFor(q);
  if (!options) { p.unsupported = "not expressible: " + options.error().message; return p; }
  p.train = *options;
  if (!s.Peek("device").empty()) {
    // validation/measure.py calls opt.zero_grad(set_to_none=True) whatever torch's default.
    p.train.zero_grad_set_to_none = true;
    if (cpu) p.train.device = ComputeDevice::kCpu;
  }
  if (foreach) p.train.foreach_optimizer = *foreach;
  if (row.measure == "memory_after_load") {
    // The weights alone, as the run loads them (validation/measure.py records them before
    // training): the row's dtype, else its precision's (bf16 pure; fp32 for fp32 and the
    // autocast precisions, which keep float32 weights).
    p.kind = "load";
    p.row_class = RowClass::kLoad;
    p.tolerance = p.rough ? 0.30 : 0.05;
    InferenceRequest w;
    w.quant = q.method == "qlora" ? q.qlora_quant : "stored";
    w.dtype = !dtype_word.empty() ? dtype_word : q.precision == "bf16" ? "bfloat16" : "float32";
    auto weights = InferenceOptionsFor(w);
    if (!weights) { p.unsupported = "not expressible: " + weights.error().message; return p; }
    p.inference = *weights;
    p.dtype = p.inference.dtype;
  }
  return p;
}

}  // namespace

RowPlan PlanRow(const MeasuredRow& row) {
  RowSettings settings(row.settings);
  RowPlan p = PlanRowSettings(row, settings);
  if (!p.unsupported.empty()) return p;
  // Every key the row names is applied, or the row is not expressed, with the keys named.
  if (auto left = settings.Unapplied(); !left.empty()) {
    std::string keys;
    for (const auto& k : left) keys += (keys.empty() ? "" : ", ") + k;
    p.unsupported = fmt::format("not expressible: {} (not a setting memfit validate applies to a "
                                "{} row; docs/accuracy.md, \"Row settings\")",
                                keys, row.task);
  }
  return p;
}

}  // namespace memfit
