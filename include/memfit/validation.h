#pragma once
// `memfit validate`: runs memfit on each row of a measured.csv-format file (published memory
// measurements) it can express and compares. Each row's settings become the typed request the
// CLI builds from the same flags (memfit/requests.h: `memfit inference` / `memfit train`), and
// its options come from that request as the CLI's do; the row -> request mapping is pure and
// testable; models come from a caller-supplied provider.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/architecture.h"
#include "memfit/estimate_inference.h"
#include "memfit/estimate_train.h"
#include "memfit/model.h"
#include "memfit/requests.h"
#include "memfit/result.h"

namespace memfit {

// The caching allocator's share of an nvidia-smi reading beyond the allocated peak, as a
// fraction of that peak, applied to nvml/nvidia-smi rows. A round figure fitted to the
// bert-large training rows (they imply 0.0-0.13; see docs/accuracy.md): not an independent check.
inline constexpr double kNvmlAllocatorReserve = 0.10;

struct MeasuredRow {
  std::string id{}, model{}, task{}, settings_text{}, measure{}, value{}, unit{}, source{}, notes{};
  std::map<std::string, std::string> settings{};  // "key=value;..." parsed
};

// Parses the CSV (header: id,model,task,settings,measure,value,unit,source,notes; RFC 4180
// quoting). Errors name the line.
Result<std::vector<MeasuredRow>> ParseMeasuredCsv(std::string_view text, std::string_view where);

enum class RowClass : uint8_t { kLoad, kInference, kTraining };
// Inline: the renderer (src/render/validation_report.cc) names classes without linking the
// request layer below it.
inline std::string_view RowClassName(RowClass c) {
  switch (c) {
    case RowClass::kLoad: return "load";
    case RowClass::kInference: return "inference";
    case RowClass::kTraining: return "training";
  }
  return "?";
}

// What a row asks memfit to compute, or why it cannot.
struct RowPlan {
  RowClass row_class = RowClass::kLoad;
  std::string kind;          // "context", "load", "inference", "train"
  double measured_lo = 0;    // bytes (a range gives lo < hi)
  double measured_hi = 0;
  bool rough = false;        // "reported" figures, ranges, third-party readings
  double tolerance = 0.05;   // relative, asserted by the test
  bool include_context = true;  // nvml / nvidia-smi readings include the CUDA context
  bool calibration = false;  // the row a default was taken from (not an independent check)
  Dtype dtype = Dtype::kF32;    // load rows: the dtype of what is left unquantized
  // Load rows: `head` (checked against the model's class), and the weights' options (dtype and
  // quantization) as `memfit inference --dtype --quant` builds them; vLLM weight rows: whether
  // the dtype is the config's (the row names none).
  std::string head;
  bool weights_in_config_dtype = false;
  // Train rows: the request `memfit train` builds from the same words, and its options (plus
  // what no flag says: validation/measure.py's explicit zero_grad(set_to_none=True) and
  // foreach=True, the CPU device). The request's MODEL is left empty (the provider loads it).
  std::optional<TrainRequest> train_request;
  TrainOptions train;
  // transformers inference rows: the request `memfit inference` builds, and its options (a row
  // without a context keeps InferenceOptions' default context); load rows: the weights' options.
  std::optional<InferenceRequest> inference_request;
  InferenceOptions inference;
  std::string model_alias_note;  // when a same-architecture config stands in
  std::string unsupported;       // non-empty: cannot express, and why
};
// Every key of the row's settings is applied to the plan, or the plan is unsupported with
// "not expressible: key=value (why)": unknown keys, keys of another task, values the flag they
// become refuses (docs/accuracy.md, "Row settings").
RowPlan PlanRow(const MeasuredRow& row);

struct RowResult {
  std::string id, model;
  RowClass row_class = RowClass::kLoad;
  bool expressed = false;
  std::string reason{};      // why not expressed
  double measured = 0;       // bytes (midpoint of a range)
  double estimate = 0;       // bytes
  double error = 0;          // (estimate - measured) / measured
  double tolerance = 0;
  bool within = false;       // |error| <= tolerance (or inside the measured range)
  bool rough = false;
  bool calibration = false;
  std::string note{};
};

// The model a row names, built with `build` (the transformers release the row was measured
// with, from its source column).
using ModelProvider =
    std::function<Result<Model>(std::string_view model_id, const BuildOptions& build)>;
RowResult EvaluateRow(const MeasuredRow& row, const ModelProvider& provider);

// A measured model whose config.json is not in the models folder but is a sibling's config with
// published dimensions changed (bert-large-uncased = bert-base-uncased with L 24, H 1024, A 16,
// FFN 4096, Devlin et al. 2019), loaded as a sequence classifier as in the measurement.
struct DerivedConfig {
  std::string base_id;
  std::string overrides_json;  // a JSON object: its keys replace the base config's
};
std::optional<DerivedConfig> DerivedConfigFor(std::string_view model_id);

// The model id the provider should load for a row: an identical-architecture stand-in where the
// measured checkpoint's config is not available (documented in docs/accuracy.md).
std::string ModelIdForRow(std::string_view model_id);

}  // namespace memfit
