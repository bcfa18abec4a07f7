#pragma once
// The one wrapper around nlohmann::json's throwing parser: untrusted JSON in, Result out, with
// limits on size and nesting depth enforced while parsing (see docs/security.md). Internal to the
// library: no public header names nlohmann (issue 18); they forward-declare JsonValue.

#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "memfit/result.h"

namespace memfit {

// A parsed JSON value held by public types (HfConfig, Model::quantization_config) whose headers
// only forward-declare it. Library code includes this header and uses it as the nlohmann::json it
// is; library users read those values through typed accessors.
struct JsonValue : nlohmann::json {
  JsonValue() = default;
  JsonValue(nlohmann::json value) : nlohmann::json(std::move(value)) {}  // NOLINT: implicit
};

}  // namespace memfit

// Copying a JsonValue into a nlohmann::json must copy the value: without this, basic_json's
// converting constructor takes the derived type as a "compatible type" and serializes it through
// its implicit conversion to std::string (a type_error on any object).
template <>
struct nlohmann::adl_serializer<memfit::JsonValue> {
  static void to_json(nlohmann::json& out, const memfit::JsonValue& value) {
    out = static_cast<const nlohmann::json&>(value);
  }
  static void from_json(const nlohmann::json& in, memfit::JsonValue& value) {
    static_cast<nlohmann::json&>(value) = in;
  }
};

namespace memfit {

struct JsonLimits {
  uint64_t max_bytes = 100'000'000;  // the safetensors library's MAX_HEADER_SIZE
  uint32_t max_depth = 64;
  // Accept Python json's NaN, Infinity and -Infinity outside strings, as the doubles they stand
  // for: config.json is written by Python's json module and read by transformers that way.
  bool python_constants = false;
};

// Parses `text`; errors name `what` ("config.json", "safetensors header") and the position.
Result<nlohmann::json> ParseJson(std::string_view text, std::string_view what,
                                 const JsonLimits& limits = {});

// Serializes JSON for output with 2-space indentation (indent -1: on one line). Strings memfit did
// not parse itself (paths, model names given on the command line, names and strings read from
// GGUF and safetensors headers) may hold invalid UTF-8, on which nlohmann's dump() throws: such
// bytes become U+FFFD instead. Every renderer uses this, never dump().
std::string DumpJson(const nlohmann::json& value, int indent = 2);

// A short description of a JSON value's type for error messages: "string", "array", ...
std::string_view JsonTypeName(const nlohmann::json& value);

}  // namespace memfit
