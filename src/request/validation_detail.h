#pragma once
// Helpers shared by `memfit validate`'s CSV reader and evaluation (validation.cc) and its row
// planner (validation_plan.cc, validation_plan_train.cc); private to the request module.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/result.h"
#include "memfit/validation.h"

namespace memfit::validation_detail {

// A decimal integer of at most 12 digits; nullopt otherwise.
std::optional<uint64_t> ToUint(const std::string& s);
// Bytes per unit as the sources print them: HF's "MB" is MiB (//1024**2); "GB" is taken as
// decimal gigabytes (PEFT, papers, nvidia-smi readings are ambiguous: these rows are rough).
std::optional<double> UnitBytes(std::string_view unit);
// "not expressible: key=value (why)" (just "key" for a key without a value).
std::string NotExpressible(std::string_view key, std::string_view value, std::string_view why);

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
  std::vector<std::string> Unapplied() const;

 private:
  const std::map<std::string, std::string>& settings_;
  std::set<std::string> applied_;
};

// A positive integer setting into `out` (absent: `out` unchanged); false with `why` set when the
// value is not one.
bool TakeCount(RowSettings& s, std::string_view key, uint64_t& out, std::string& why);

// A value checked by the parser of the flag it becomes; false with `why` naming key and value.
template <typename Parsed>
bool Check(std::string_view key, std::string_view value, const Result<Parsed>& parsed,
           std::string& why) {
  if (parsed) return true;
  why = NotExpressible(key, value, parsed.error().message);
  return false;
}

// The value of `key` into `out` when the row names it (absent: `out` unchanged), checked by
// `parse`, the parser of the flag it becomes.
template <typename Parse>
bool TakeParsed(RowSettings& s, std::string_view key, std::string& out, Parse parse,
                std::string& why) {
  if (!s.Has(key)) return true;
  out = s.Take(key);
  return Check(key, out, parse(out), why);
}

// What a row's planning shares between its task's planners: the row's dtype word (checked), the
// library releases it names as flag words, and whether it ran on CPU.
struct RowContext {
  std::string dtype_word;
  std::string torch_version, transformers_version;
  bool cpu = false;
};

// The train row's words as `memfit train`'s flags (validation_plan_train.cc).
void PlanTrainRow(const MeasuredRow& row, RowSettings& s, const RowContext& c, RowPlan& p);

}  // namespace memfit::validation_detail
