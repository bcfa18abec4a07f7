// measured.csv rows -> the typed requests `memfit inference` / `memfit train` build from their
// flags (memfit/requests.h; the planning is validation_plan.cc) -> options -> estimate vs
// measurement. docs/accuracy.md.

#include "memfit/validation.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "request/validation_detail.h"

namespace memfit {

namespace validation_detail {

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

}  // namespace validation_detail

namespace {

using validation_detail::NotExpressible;
using validation_detail::UnitBytes;

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


const std::map<std::string, std::string>& Aliases() {
  // Same architecture and sizes (config.json identical but for the repo name / generation
  // defaults), so the memory figures transfer.
  static const std::map<std::string, std::string> kAliases = {
      {"meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-7b-chat-hf"},
  };
  return kAliases;
}

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

namespace {

// A load row's `head` against the model the provider built: "" when it is that head.
std::string HeadMismatch(const Model& model, const std::string& head) {
  if (head.empty()) return "";
  const std::string& arch = model.architecture;
  const bool ok = head == "sequence-classification" ? arch.ends_with("ForSequenceClassification")
                  : head == "causal-lm"               ? arch.ends_with("ForCausalLM")
                                                      : arch.find("For") == std::string::npos;
  if (ok) return "";
  return NotExpressible("head", head, "the model's config builds " +
                                          (arch.empty() ? std::string("no named class") : arch));
}

// A row's inference or training options with the CUDA context left out where its measure leaves
// it out.
template <typename Options>
Options ContextAsMeasured(Options options, const RowPlan& p) {
  if (!p.include_context) options.overhead.cuda_context_bytes = 0;
  return options;
}

}  // namespace

RowResult EvaluateRow(const MeasuredRow& row, const ModelProvider& provider) {
  RowResult r;
  r.id = row.id;
  r.model = row.model;
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
    const RuntimeVersions& versions = p.kind == "train" ? p.train.versions : p.inference.versions;
    auto model = provider(id, {.transformers = versions.transformers});
    if (!model) {
      r.reason = model.error().message;
      return r;
    }
    if (id != row.model) {
      r.note += (r.note.empty() ? "" : "; ") + ("config of " + id + " (same architecture)");
    }
    if (p.kind == "load") {
      if (auto why = HeadMismatch(*model, p.head); !why.empty()) {
        r.reason = why;
        return r;
      }
      auto w = PrepareInferenceWeights(*model, p.inference);
      if (!w) { r.reason = w.error().message; return r; }
      r.estimate = static_cast<double>(w->weights.total_bytes) + (p.include_context ? context : 0);
    } else if (p.kind == "inference") {
      auto e = EstimateInference(*model, ContextAsMeasured(p.inference, p));
      if (!e) { r.reason = e.error().message; return r; }
      r.estimate = static_cast<double>(e->total_bytes);
      if (r.note.empty()) r.note = "peak at " + e->activation_peak_at;
    } else if (p.kind == "inference-weights") {
      InferenceOptions o = p.inference;
      if (p.weights_in_config_dtype) o.dtype = model->config_dtype.value_or(Dtype::kBF16);
      auto w = PrepareInferenceWeights(*model, o);
      if (!w) { r.reason = w.error().message; return r; }
      r.estimate = static_cast<double>(w->weights.total_bytes);
    } else {
      auto e = EstimateTraining(*model, ContextAsMeasured(p.train, p));
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
