#include "memfit/hf_config.h"

#include <cmath>

#include "formats/hf_config_json.h"
#include "formats/json.h"

namespace memfit {
namespace {

// The text of the value of top-level key `key` in a JSON object's text that already parsed (so it
// is valid JSON, bar Python constants): a scan that skips strings and tracks depth.
std::string_view TopLevelValueText(std::string_view text, std::string_view key) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const size_t start = i + 1;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (depth != 1 || text.substr(start, i - start) != key) continue;
      size_t v = text.find_first_not_of(" \t\r\n", i + 1);
      if (v == std::string_view::npos || text[v] != ':') continue;  // a value, not a key
      v = text.find_first_not_of(" \t\r\n", v + 1);
      if (v == std::string_view::npos) return {};
      int inner = 0;
      for (size_t j = v; j < text.size(); ++j) {
        const char d = text[j];
        if (d == '"') {
          for (++j; j < text.size() && text[j] != '"'; ++j) {
            if (text[j] == '\\') ++j;
          }
        } else if (d == '{' || d == '[') {
          ++inner;
        } else if (d == '}' || d == ']') {
          if (--inner == 0) return text.substr(v, j + 1 - v);
        }
      }
      return {};
    }
    if (c == '{' || c == '[') ++depth;
    else if (c == '}' || c == ']') --depth;
  }
  return {};
}

const nlohmann::json* Find(const nlohmann::json& json, std::string_view key) {
  auto it = json.find(key);
  if (it == json.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

Result<HfConfig> HfConfig::Parse(std::string_view json_text, std::string where) {
  MEMFIT_ASSIGN_OR_RETURN(nlohmann::json json,
                          ParseJson(json_text, where, JsonLimits{.max_bytes = 16'000'000, .python_constants = true}));
  MEMFIT_ASSIGN_OR_RETURN(HfConfig config, FromJson(std::move(json), std::move(where)));
  // nlohmann::json sorts object keys; auto_map's order matters, so read that object again in file
  // order (only it: a whole config in ordered_json is quadratic in its largest object).
  if (const auto* auto_map = Find(*config.json_, "auto_map"); auto_map && auto_map->is_object()) {
    try {
      auto ordered = nlohmann::ordered_json::parse(TopLevelValueText(json_text, "auto_map"));
      for (const auto& item : ordered.items()) config.auto_map_keys_.push_back(item.key());
    } catch (const std::exception&) {
      // Already parsed successfully once; unreachable in practice.
    }
  }
  return config;
}

Result<HfConfig> HfConfig::FromJson(JsonValue json, std::string where) {
  if (!json.is_object()) {
    return MakeError("{}: expected a JSON object, got {}", where, JsonTypeName(json));
  }
  return HfConfig(std::make_shared<const JsonValue>(std::move(json)), std::move(where));
}

const JsonValue& HfConfig::raw() const { return *json_; }

bool HfConfig::Has(std::string_view key) const { return Find(*json_, key) != nullptr; }

Result<uint64_t> HfConfig::Uint(std::string_view key) const {
  const auto* value = Find(*json_, key);
  if (!value) return MakeError("{}: missing required field \"{}\"", where_, key);
  if (value->is_number_float()) {
    double d = value->get<double>();
    if (d >= 0 && d == std::floor(d) && d <= static_cast<double>(kMaxConfigDimension)) {
      return static_cast<uint64_t>(d);
    }
  }
  // is_number_integer() also holds for unsigned values; only a signed one can be negative (an
  // unsigned value above 2^63 read as int64_t would look negative).
  if (value->is_number_integer() && !value->is_number_unsigned() && value->get<int64_t>() < 0) {
    return MakeError("{}: field \"{}\" must not be negative, got {}", where_, key,
                     value->get<int64_t>());
  }
  if (!value->is_number_unsigned() && !value->is_number_integer()) {
    return MakeError("{}: field \"{}\" must be a non-negative integer, got {}", where_, key,
                     value->is_number() ? value->dump() : std::string(JsonTypeName(*value)));
  }
  uint64_t result = value->get<uint64_t>();
  if (result > kMaxConfigDimension) {
    return MakeError("{}: field \"{}\" = {} is absurdly large (limit 2^40)", where_, key, result);
  }
  return result;
}

Result<uint64_t> HfConfig::UintOr(std::string_view key, uint64_t fallback) const {
  if (!Has(key)) return fallback;
  return Uint(key);
}

Result<uint64_t> HfConfig::UintAny(std::initializer_list<std::string_view> keys) const {
  for (auto key : keys) {
    if (Has(key)) return Uint(key);
  }
  std::string names;
  for (auto key : keys) names += fmt::format("{}\"{}\"", names.empty() ? "" : " or ", key);
  return MakeError("{}: missing required field {}", where_, names);
}

Result<double> HfConfig::NumberOr(std::string_view key, double fallback) const {
  const auto* value = Find(*json_, key);
  if (!value) return fallback;
  if (!value->is_number()) {
    return MakeError("{}: field \"{}\" must be a number, got {}", where_, key, JsonTypeName(*value));
  }
  return value->get<double>();
}

Result<bool> HfConfig::BoolOr(std::string_view key, bool fallback) const {
  const auto* value = Find(*json_, key);
  if (!value) return fallback;
  if (!value->is_boolean()) {
    return MakeError("{}: field \"{}\" must be true or false, got {}", where_, key,
                     JsonTypeName(*value));
  }
  return value->get<bool>();
}

Result<std::string> HfConfig::StringOr(std::string_view key, std::string fallback) const {
  const auto* value = Find(*json_, key);
  if (!value) return fallback;
  if (!value->is_string()) {
    return MakeError("{}: field \"{}\" must be a string, got {}", where_, key, JsonTypeName(*value));
  }
  return value->get<std::string>();
}

Result<HfConfig> HfConfig::Sub(std::string_view key) const {
  const auto* value = Find(*json_, key);
  if (!value) return MakeError("{}: missing required object \"{}\"", where_, key);
  if (!value->is_object()) {
    return MakeError("{}: \"{}\" must be an object, got {}", where_, key, JsonTypeName(*value));
  }
  return HfConfig(std::make_shared<const JsonValue>(*value), fmt::format("{}: {}", where_, key));
}

std::optional<HfConfig> HfConfig::OptionalSub(std::string_view key) const {
  const auto* value = Find(*json_, key);
  if (!value || !value->is_object()) return std::nullopt;
  return HfConfig(std::make_shared<const JsonValue>(*value), fmt::format("{}: {}", where_, key));
}

std::string HfConfig::model_type() const {
  const auto* value = Find(*json_, "model_type");
  return value && value->is_string() ? value->get<std::string>() : std::string();
}

std::vector<std::string> HfConfig::architectures() const {
  std::vector<std::string> out;
  const auto* value = Find(*json_, "architectures");
  if (value && value->is_array()) {
    for (const auto& item : *value) {
      if (item.is_string()) out.push_back(item.get<std::string>());
    }
  }
  return out;
}

std::optional<Dtype> HfConfig::torch_dtype() const {
  for (auto key : {"dtype", "torch_dtype"}) {
    const auto* value = Find(*json_, key);
    if (value && value->is_string()) {
      auto dtype = ParseDtypeName(value->get<std::string>());
      if (dtype) return *dtype;
    }
  }
  return std::nullopt;
}

bool HfConfig::has_quantization_config() const { return QuantizationConfigJson(*this) != nullptr; }

const nlohmann::json* QuantizationConfigJson(const HfConfig& config) {
  const auto* value = Find(config.raw(), "quantization_config");
  return value && value->is_object() ? value : nullptr;
}

}  // namespace memfit
