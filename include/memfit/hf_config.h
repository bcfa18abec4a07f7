#pragma once
// config.json as written by transformers: typed access with errors that name the field.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/dtype.h"
#include "memfit/result.h"

namespace memfit {

// The largest dimension memfit accepts from a config (2^40); anything larger is "absurd".
inline constexpr uint64_t kMaxConfigDimension = uint64_t{1} << 40;

// A parsed JSON value; opaque outside the library (defined in src/formats/json.h).
struct JsonValue;

class HfConfig {
 public:
  // `where` names the file in errors, e.g. "config.json" or "models/x/config.json".
  static Result<HfConfig> Parse(std::string_view json_text, std::string where = "config.json");
  // From an already parsed object (library code: src/formats/json.h makes a JsonValue).
  static Result<HfConfig> FromJson(JsonValue json, std::string where);

  // The whole parsed config (library code only: the type is complete in src/formats/json.h).
  const JsonValue& raw() const;
  const std::string& where() const { return where_; }

  bool Has(std::string_view key) const;
  // Required non-negative integer field, at most kMaxConfigDimension.
  Result<uint64_t> Uint(std::string_view key) const;
  // Optional integer field: `fallback` when absent or null.
  Result<uint64_t> UintOr(std::string_view key, uint64_t fallback) const;
  // First present key among `keys` (e.g. {"n_embd", "hidden_size"}); error naming all if none.
  Result<uint64_t> UintAny(std::initializer_list<std::string_view> keys) const;
  Result<double> NumberOr(std::string_view key, double fallback) const;
  Result<bool> BoolOr(std::string_view key, bool fallback) const;
  Result<std::string> StringOr(std::string_view key, std::string fallback) const;
  // A nested config object ("text_config", "vision_config"); errors say "config.json: text_config".
  Result<HfConfig> Sub(std::string_view key) const;
  std::optional<HfConfig> OptionalSub(std::string_view key) const;

  std::string model_type() const;                  // "" when absent
  std::vector<std::string> architectures() const;  // [] when absent
  // "torch_dtype" (transformers < 4.56) or "dtype"; nullopt when absent or unrecognised.
  std::optional<Dtype> torch_dtype() const;
  // Whether "quantization_config" is present as an object (library code reads it with
  // QuantizationConfigJson, src/formats/hf_config_json.h).
  bool has_quantization_config() const;
  // The keys of "auto_map" in file order (accelerate builds the first AutoModelFor* one).
  const std::vector<std::string>& auto_map_keys() const { return auto_map_keys_; }

 private:
  HfConfig(std::shared_ptr<const JsonValue> json, std::string where)
      : json_(std::move(json)), where_(std::move(where)) {}
  std::shared_ptr<const JsonValue> json_;  // never null; shared by copies (it is immutable)
  std::string where_;
  std::vector<std::string> auto_map_keys_;
};

}  // namespace memfit
