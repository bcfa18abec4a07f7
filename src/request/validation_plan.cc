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

}  // namespace

namespace validation_detail {

std::vector<std::string> RowSettings::Unapplied() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : settings_) {
    if (!applied_.count(k)) out.push_back(v.empty() ? k : k + "=" + v);
  }
  return out;
}

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

}  // namespace validation_detail

namespace {

using validation_detail::Check;
using validation_detail::RowContext;
using validation_detail::RowSettings;
using validation_detail::TakeCount;
using validation_detail::TakeParsed;

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

// The row's value and unit as bytes, whether the figure is rough, and whether it includes the CUDA
// context; false with p.unsupported set when the row is not a figure memfit compares.
bool PlanMeasuredFigure(const MeasuredRow& row, RowPlan& p) {
  auto unit = UnitBytes(row.unit);
  const std::string& v = row.value;
  size_t dash = v.find('-');
  double lo = std::strtod(v.c_str(), nullptr);
  double hi = lo;
  if (dash != std::string::npos && dash > 0) hi = std::strtod(v.c_str() + dash + 1, nullptr);
  if (!unit || !(lo > 0) || !(hi >= lo)) {
    p.unsupported = fmt::format("value \"{}\" {} is not a byte size memfit reads", row.value,
                                row.unit);
    return false;
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
    return false;
  }
  return true;
}

// The row's task as the plan's kind and class, and the tolerance of that class; false with
// p.unsupported set for a task memfit does not estimate.
bool PlanTask(const MeasuredRow& row, RowPlan& p) {
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
    return false;
  }
  p.tolerance = p.rough ? 0.30 : (p.row_class == RowClass::kTraining ? 0.10 : 0.05);
  return true;
}

// Rows of runs memfit's inference and train estimators do not model; true with p.unsupported set.
bool RefuseOtherRuns(const MeasuredRow& row, const RowSettings& s, RowPlan& p) {
  if (row.measure == "llama_log" || s.Peek("format") == "gguf" ||
      s.Peek("engine").starts_with("llama.cpp")) {
    p.unsupported = "llama.cpp / GGUF row: estimated by the GGUF estimator, not by inference/train";
    return true;
  }
  if (s.Peek("framework") == "megatron") {
    p.unsupported = "Megatron-LM run (distributed optimizer, its own activation layout and "
                    "buffers; sequence length not given): not modelled";
    return true;
  }
  return false;
}

// The row's words are `memfit inference`'s flags (the same InferenceRequest, the same options).
void PlanInferenceRow(const MeasuredRow& row, RowSettings& s, const RowContext& c, RowPlan& p) {
  InferenceRequest& q = p.inference_request.emplace();
  const std::string engine = s.Take("engine");
  q.engine = engine.empty() ? "transformers" : engine;
  if (!Check("engine", engine, ParseEngine(q.engine), p.unsupported)) return;
  if (q.engine != "transformers" && q.engine != "vllm") {
    p.unsupported = NotExpressible("engine", engine, "memfit validate compares transformers "
                                   "runs and vLLM's weights line");
    return;
  }
  q.torch_version = c.torch_version;
  q.transformers_version = c.transformers_version;
  // Encoder-decoder models whose prompt is the encoder's (T5): generate() feeds the start
  // token and decode - 1 generated tokens to the decoder, so its cache holds `decode` tokens.
  if (!TakeCount(s, "context", q.context, p.unsupported) ||
      !TakeCount(s, "batch", q.batch, p.unsupported) ||
      !TakeCount(s, "decode", q.decoder_tokens, p.unsupported)) {
    return;
  }
  if (!c.dtype_word.empty()) q.dtype = c.dtype_word;
  // gpu_memory_total: the GPU's memory (a vLLM run's budget; the verdict's GPU for transformers).
  if (!TakeParsed(s, "quant", q.quant, ParseQuant, p.unsupported) ||
      !TakeParsed(s, "attn", q.attn, ParseAttnImpl, p.unsupported) ||
      !TakeParsed(s, "gpu_memory_total", q.gpu_memory, ParseByteSize, p.unsupported)) {
    return;
  }
  // On CPU transformers' Mamba-2 mixers have no mamba_ssm kernels: the torch path.
  if (c.cpu) q.mamba_scan = "torch";
  auto options = InferenceOptionsFor(q);
  if (!options) { p.unsupported = "not expressible: " + options.error().message; return; }
  // A row without a context keeps the estimator's own default (the request's 0 would be the
  // model's, chosen when the request is run).
  if (q.context == 0) options->context_tokens = InferenceOptions{}.context_tokens;
  else options->context_tokens = q.context;
  // A decoder-only model's generate() prefills context - decode tokens and adds decode more
  // (--new-tokens; the estimator leaves it to --decoder-tokens for encoder-decoders).
  if (q.decoder_tokens > 0 && q.decoder_tokens < options->context_tokens) {
    options->new_tokens = q.decoder_tokens;
  }
  p.inference = *options;
  if (q.engine == "vllm") {
    // The profiler's "weights" line: the weights as vLLM loads them, in the config's dtype
    // unless the row names one (EvaluateRow).
    p.kind = "inference-weights";
    p.weights_in_config_dtype = c.dtype_word.empty();
  }
  if (row.measure == "memory_after_load") {
    // The weights alone (validation/measure.py records them before the run).
    p.kind = "load";
    p.row_class = RowClass::kLoad;
    p.tolerance = p.rough ? 0.30 : 0.05;
    p.dtype = p.inference.dtype;
  }
}

RowPlan PlanRowSettings(const MeasuredRow& row, RowSettings& s) {
  RowPlan p;
  if (!PlanMeasuredFigure(row, p) || !PlanTask(row, p)) return p;
  // Each row is estimated with the torch / transformers releases it was measured with.
  p.inference.versions = RowVersions(row.source);
  p.train.versions = p.inference.versions;
  RowContext c;
  c.torch_version = LibraryVersionName(p.inference.versions.torch);
  c.transformers_version = LibraryVersionName(p.inference.versions.transformers);
  if (RefuseOtherRuns(row, s, p)) return p;
  if (!TakeRecorded(s, p.unsupported) || !TakeDevice(s, c.cpu, p.unsupported)) return p;
  if (p.kind == "context") {
    s.Take("op");  // the operation that created the context (recorded)
    return p;
  }
  // A dtype word, checked (the row's own message, without a flag's name).
  if (!TakeParsed(s, "dtype", c.dtype_word, ParseDtypeName, p.unsupported)) return p;
  if (p.kind == "load") {
    if (!TakeParsed(s, "head", p.head, ParseTaskHead, p.unsupported)) return p;
    if (!p.head.empty() && *ParseTaskHead(p.head) == TaskHead::kAuto) p.head.clear();
    PlanLoadWeights(s, c.dtype_word, p);
  } else if (p.kind == "inference") {
    PlanInferenceRow(row, s, c, p);
  } else {
    validation_detail::PlanTrainRow(row, s, c, p);
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
