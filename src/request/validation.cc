// measured.csv rows -> the typed requests `memfit inference` / `memfit train` build from their
// flags (memfit/requests.h) -> options -> estimate vs measurement. docs/accuracy.md.

#include "memfit/validation.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "memfit/quantization.h"
#include "request/request_options.h"

namespace memfit {
namespace {

std::vector<std::string> SplitCsvLine(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') { cur += '"'; ++i; }
      else if (ch == '"') quoted = false;
      else cur += ch;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(std::move(cur));
  return out;
}

std::optional<uint64_t> ToUint(const std::string& s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  for (char c : s) if (c < '0' || c > '9') return std::nullopt;
  return std::stoull(s);
}

// Bytes per unit as the sources print them: HF's "MB" is MiB (//1024**2); "GB" is taken as
// decimal gigabytes (PEFT, papers, nvidia-smi readings are ambiguous: these rows are rough).
std::optional<double> UnitBytes(std::string_view unit) {
  if (unit == "MB" || unit == "MiB") return 1048576.0;
  if (unit == "GiB") return 1073741824.0;
  if (unit == "GB") return 1e9;
  return std::nullopt;
}

const std::map<std::string, std::string>& Aliases() {
  // Same architecture and sizes (config.json identical but for the repo name / generation
  // defaults), so the memory figures transfer.
  static const std::map<std::string, std::string> kAliases = {
      {"meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-7b-chat-hf"},
  };
  return kAliases;
}

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

}  // namespace

std::optional<DerivedConfig> DerivedConfigFor(std::string_view model_id) {
  if (model_id == "bert-large-uncased") {
    return DerivedConfig{"google-bert/bert-base-uncased",
                         R"({"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,)"
                         R"( "intermediate_size": 4096,)"
                         R"( "architectures": ["BertForSequenceClassification"]})"};
  }
  return std::nullopt;
}

std::string ModelIdForRow(std::string_view model_id) {
  auto it = Aliases().find(std::string(model_id));
  return it == Aliases().end() ? std::string(model_id) : it->second;
}

Result<std::vector<MeasuredRow>> ParseMeasuredCsv(std::string_view text, std::string_view where) {
  std::vector<MeasuredRow> rows;
  size_t pos = 0, line_no = 0;
  bool header = true;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    auto f = SplitCsvLine(line);
    if (!header && f.size() > 9) {
      // Unquoted commas inside settings (e.g. "torch.ones((1,1))"): the measure column is the
      // first after field 3 that is followed by a number and a unit.
      for (size_t i = 4; i + 2 < f.size(); ++i) {
        char* end = nullptr;
        std::strtod(f[i + 1].c_str(), &end);
        if (end != f[i + 1].c_str() && UnitBytes(f[i + 2])) {
          std::string settings = f[3];
          for (size_t j = 4; j < i; ++j) settings += "," + f[j];
          std::string notes;
          for (size_t j = i + 4; j < f.size(); ++j) notes += (j > i + 4 ? "," : "") + f[j];
          f = {f[0], f[1], f[2], settings, f[i], f[i + 1], f[i + 2], f[i + 3], notes};
          break;
        }
      }
    }
    if (header) {
      if (f.size() < 8 || f[0] != "id" || f[1] != "model" || f[5] != "value") {
        return MakeError("{}:{}: expected the header id,model,task,settings,measure,value,unit,"
                         "source,notes", where, line_no);
      }
      header = false;
      continue;
    }
    if (f.size() < 8) return MakeError("{}:{}: {} fields, expected at least 8", where, line_no, f.size());
    f.resize(9);
    MeasuredRow r{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], {}};
    size_t s = 0;
    while (s <= r.settings_text.size()) {
      size_t e = r.settings_text.find(';', s);
      if (e == std::string::npos) e = r.settings_text.size();
      std::string kv = r.settings_text.substr(s, e - s);
      size_t eq = kv.find('=');
      if (eq != std::string::npos) r.settings[kv.substr(0, eq)] = kv.substr(eq + 1);
      else if (!kv.empty()) r.settings[kv] = "";
      s = e + 1;
    }
    rows.push_back(std::move(r));
  }
  if (header) return MakeError("{}: empty file (no header)", where);
  return rows;
}

RowPlan PlanRow(const MeasuredRow& row) {
  RowPlan p;
  const auto& s = row.settings;
  auto get = [&](const char* k) -> std::string {
    auto it = s.find(k);
    return it == s.end() ? "" : it->second;
  };
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
  if (row.measure == "llama_log" || get("format") == "gguf" || get("engine").starts_with("llama.cpp")) {
    p.unsupported = "llama.cpp / GGUF row: estimated by the GGUF estimator, not by inference/train";
    return p;
  }
  if (get("framework") == "megatron") {
    p.unsupported = "Megatron-LM run (distributed optimizer, its own activation layout and "
                    "buffers; sequence length not given): not modelled";
    return p;
  }
  if (row.measure == "memory_after_load") {
    // The weights alone, whatever the task (validation/measure.py records it for every row).
    p.kind = "load";
    p.row_class = RowClass::kLoad;
    p.tolerance = p.rough ? 0.30 : 0.05;
    if (auto d = get("dtype"); !d.empty()) {
      auto dtype = ParseDtypeName(d);
      if (!dtype) { p.unsupported = dtype.error().message; return p; }
      p.dtype = *dtype;
    } else if (get("precision") == "bf16" || get("precision") == "bf16-mixed") {
      p.dtype = get("precision") == "bf16" ? Dtype::kBF16 : Dtype::kF32;
    } else if (get("precision") == "fp32") {
      p.dtype = Dtype::kF32;
    }
    return p;
  }
  if (p.kind == "inference" && (get("engine").empty() || get("engine") == "transformers")) {
    // transformers generate(): prefill of context - decode tokens, then decode. The row's words
    // are `memfit inference`'s flags (the same InferenceRequest, the same options).
    InferenceRequest& q = p.inference_request.emplace();
    q.engine = "transformers";
    q.torch_version = versions.torch;
    q.transformers_version = versions.transformers;
    auto number = [&](const char* k, uint64_t& out) {
      auto x = get(k);
      if (x.empty()) return true;
      auto n = ToUint(x);
      if (!n || *n == 0) return false;
      out = *n;
      return true;
    };
    // Encoder-decoder models whose prompt is the encoder's (T5): generate() feeds the start
    // token and decode - 1 generated tokens to the decoder, so its cache holds `decode` tokens.
    if (!number("context", q.context) || !number("batch", q.batch) ||
        !number("decode", q.decoder_tokens)) {
      p.unsupported = "a numeric setting is not a positive integer";
      return p;
    }
    if (auto d = get("dtype"); !d.empty()) {
      auto dtype = ParseDtypeName(d);  // the row's own message, without the flag's name
      if (!dtype) { p.unsupported = dtype.error().message; return p; }
      q.dtype = d;
    }
    if (auto a = get("attn"); !a.empty()) q.attn = a;
    // On CPU transformers' Mamba-2 mixers have no mamba_ssm kernels: the torch path.
    if (get("device") == "cpu") q.mamba_scan = "torch";
    auto options = InferenceOptionsFor(q);
    if (!options) { p.unsupported = options.error().message; return p; }
    // A row without a context keeps the estimator's own default (the request's 0 would be the
    // model's, chosen when the request is run).
    if (q.context == 0) options->context_tokens = InferenceOptions{}.context_tokens;
    else options->context_tokens = q.context;
    p.inference = *options;
    return p;
  }
  if (p.kind == "inference") {
    if (get("engine") != "vllm") {
      p.unsupported = "inference row without an engine memfit models";
      return p;
    }
    p.inference.engine = Engine::kVllm;
    p.kind = "inference-weights";  // the profiler's "weights" line
    return p;
  }
  if (auto d = get("dtype"); !d.empty()) {
    auto dt = ParseDtypeName(d);
    if (!dt) { p.unsupported = "dtype " + d; return p; }
    p.dtype = *dt;
  }
  if (p.kind != "train") return p;
  // The row's words as `memfit train`'s flags (the same TrainRequest, the same options); what no
  // flag says (the harness's explicit zero_grad(set_to_none=True) and foreach=True, the CPU
  // device) is set on the options after.
  TrainRequest& q = p.train_request.emplace();
  q.torch_version = versions.torch;
  q.transformers_version = versions.transformers;
  q.precision = p.dtype == Dtype::kF32 ? "fp32" : "bf16-mixed";
  if (auto x = get("precision"); !x.empty()) {
    // HF Trainer's bf16=True is autocast (bf16-mixed), not pure bf16; memfit's own harness
    // (validation/measure.py, device=...) writes bf16-mixed for autocast and bf16 for pure bf16.
    const bool harness = !get("device").empty();
    q.precision = x == "bf16" && !harness ? "bf16-mixed" : x;
  }
  std::string method = get("method");
  if (method.empty() || method == "full") q.method = "full";
  else if (method.starts_with("qlora")) q.method = "qlora";
  else if (method.starts_with("lora")) q.method = "lora";
  else { p.unsupported = "method " + method; return p; }
  if (size_t r = method.find("(r"); r != std::string::npos) {
    q.lora_rank = std::strtoull(method.c_str() + r + 2, nullptr, 10);
    if (q.lora_rank == 0) { p.unsupported = "LoRA rank in " + method; return p; }
  }
  if (auto rank = get("rank"); !rank.empty()) {  // validation/measure.py writes rank=16
    auto n = ToUint(rank);
    if (!n || *n == 0) { p.unsupported = "LoRA rank " + rank; return p; }
    q.lora_rank = *n;
  }
  if (auto x = get("optimizer"); !x.empty()) q.optimizer = x;
  auto num = [&](const char* k, uint64_t& out) -> bool {
    auto x = get(k);
    if (x.empty()) return true;
    auto n = ToUint(x);
    if (!n || *n == 0) return false;
    out = *n;
    return true;
  };
  if (!num("batch", q.batch) || !num("grad_accum", q.grad_accum) || !num("gpus", q.gpus) ||
      !num("seq", q.context) || !num("decoder_tokens", q.decoder_tokens)) {
    p.unsupported = "a numeric setting is not a positive integer";
    return p;
  }
  if (get("seq").empty()) {
    p.unsupported = "sequence length not given";
    return p;
  }
  if (get("checkpointing") == "full") q.checkpointing = "full";
  // Rows from transformers' older docs (torch 1.x era) predate SDPA (eager attention), kept
  // zeroed gradients between steps (zero_grad(set_to_none=False)) and stepped AdamW per tensor.
  if (get("trainer") == "hf") {
    q.attn = "eager";
    q.keep_grads = true;
    q.no_foreach = true;
  }
  std::optional<bool> foreach;
  if (auto x = get("foreach"); !x.empty()) {  // validation/measure.py: AdamW(foreach=...)
    if (x != "true" && x != "false") {
      p.unsupported = "foreach " + x;
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
  if (auto a = get("attn"); !a.empty()) q.attn = a;
  if (get("device") == "cpu") q.mamba_scan = "torch";  // no mamba_ssm kernels on CPU
  if (auto x = get("strategy"); !x.empty()) q.strategy = x;
  if (auto x = get("offload"); !x.empty()) q.offload = x;
  if (method.find("DPO") != std::string::npos) {
    q.batch *= 2;  // chosen and rejected sequences go through the model together
    q.loss = "low-precision";  // TRL selective_log_softmax in bf16
    p.model_alias_note = "DPO: chosen + rejected concatenated (batch x 2), bf16 log_softmax (TRL); "
                         "the reference model is the base with adapters disabled";
  }
  if (get("precision").empty() && get("dtype").empty()) {
    q.precision = "bf16-mixed";
    p.model_alias_note += (p.model_alias_note.empty() ? "" : "; ") +
                          std::string("precision not given: bf16-mixed assumed");
    if (q.method == "lora" && q.checkpointing == "none" && get("attn") == "flash2") {
      q.checkpointing = "full";
      p.model_alias_note += "; gradient checkpointing assumed (LongLoRA's training scripts)";
    }
  }
  auto options = TrainOptionsFor(q);
  if (!options) { p.unsupported = options.error().message; return p; }
  p.train = *options;
  if (!get("device").empty()) {
    // validation/measure.py calls opt.zero_grad(set_to_none=True) whatever torch's default.
    p.train.zero_grad_set_to_none = true;
    if (get("device") == "cpu") p.train.device = ComputeDevice::kCpu;
  }
  if (foreach) p.train.foreach_optimizer = *foreach;
  return p;
}

RowResult EvaluateRow(const MeasuredRow& row, const ModelProvider& provider) {
  RowResult r{.id = row.id, .model = row.model};
  RowPlan p = PlanRow(row);
  r.row_class = p.row_class;
  r.rough = p.rough;
  r.calibration = p.calibration;
  r.tolerance = p.tolerance;
  r.measured = (p.measured_lo + p.measured_hi) / 2;
  r.note = p.model_alias_note;
  if (!p.unsupported.empty()) {
    r.reason = p.unsupported;
    return r;
  }
  const uint64_t context = OverheadOptions{}.cuda_context_bytes;
  if (p.kind == "context") {
    r.estimate = static_cast<double>(context);
    r.note = "calibration: memfit's default CUDA context is this measurement";
  } else {
    const std::string id = ModelIdForRow(row.model);
    auto model = provider(id);
    if (!model) {
      r.reason = model.error().message;
      return r;
    }
    if (id != row.model) {
      r.note += (r.note.empty() ? "" : "; ") + ("config of " + id + " (same architecture)");
    }
    if (p.kind == "load") {
      QuantOptions q{.compute_dtype = p.dtype};
      auto w = EstimateQuantizedWeights(*model, q);
      if (!w) { r.reason = w.error().message; return r; }
      r.estimate = static_cast<double>(w->total_bytes) + (p.include_context ? context : 0);
    } else if (p.kind == "inference") {
      InferenceOptions o = p.inference;
      if (!p.include_context) o.overhead.cuda_context_bytes = 0;
      auto e = EstimateInference(*model, o);
      if (!e) { r.reason = e.error().message; return r; }
      r.estimate = static_cast<double>(e->total_bytes);
      if (r.note.empty()) r.note = "peak at " + e->activation_peak_at;
    } else if (p.kind == "inference-weights") {
      QuantOptions q{.compute_dtype = model->config_dtype.value_or(Dtype::kBF16)};
      auto w = EstimateQuantizedWeights(*model, q);
      if (!w) { r.reason = w.error().message; return r; }
      r.estimate = static_cast<double>(w->total_bytes);
    } else {
      TrainOptions t = p.train;
      if (!p.include_context) t.overhead.cuda_context_bytes = 0;
      auto e = EstimateTraining(*model, t);
      if (!e) { r.reason = e.error().message; return r; }
      r.estimate = static_cast<double>(e->peak_bytes);
      if (r.note.empty()) r.note = "peak at " + e->peak_stage;
      else r.note += "; peak at " + e->peak_stage;
    }
  }
  r.expressed = true;
  r.error = (r.estimate - r.measured) / r.measured;
  r.within = r.estimate >= p.measured_lo * (1 - p.tolerance) &&
             r.estimate <= p.measured_hi * (1 + p.tolerance);
  return r;
}

}  // namespace memfit
