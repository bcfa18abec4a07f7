#pragma once
// Helpers shared by `memfit validate`'s CSV reader and evaluation (validation.cc) and its row
// planner (validation_plan.cc); private to the request module.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memfit::validation_detail {

// A decimal integer of at most 12 digits; nullopt otherwise.
std::optional<uint64_t> ToUint(const std::string& s);
// Bytes per unit as the sources print them: HF's "MB" is MiB (//1024**2); "GB" is taken as
// decimal gigabytes (PEFT, papers, nvidia-smi readings are ambiguous: these rows are rough).
std::optional<double> UnitBytes(std::string_view unit);
// "not expressible: key=value (why)" (just "key" for a key without a value).
std::string NotExpressible(std::string_view key, std::string_view value, std::string_view why);

}  // namespace memfit::validation_detail
