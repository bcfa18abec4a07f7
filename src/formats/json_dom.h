#pragma once
// A read-only view of a parsed JSON document for the readers of large JSON (safetensors headers,
// weight indexes): the walking logic is written once against JsonDocument/JsonElement, and the
// build picks the parser under it. Natively that is simdjson's DOM (a 91k-tensor index parses in
// milliseconds); the wasm build (MEMFIT_JSON_DOM_NLOHMANN, set by CMake) has no simdjson library
// and uses ParseJson (formats/json.h), which also rejects duplicate keys and deep nesting.
//
// Differences a caller may see: the nlohmann view walks an object's members in key order, not
// document order, and its parse errors read "invalid JSON: parse error at ..." rather than
// simdjson's error names.

#include <cstdint>
#include <string_view>

#include "memfit/result.h"

namespace memfit {

enum class JsonKind { kNull, kBool, kNumber, kString, kArray, kObject };

}  // namespace memfit

#ifdef MEMFIT_JSON_DOM_NLOHMANN
#include "formats/json_dom_nlohmann.h"
#else
#include "formats/json_dom_simdjson.h"
#endif

// Both headers define, in namespace memfit:
//   class JsonElement {
//     JsonKind kind() const;
//     bool GetUint64(uint64_t& out) const;  // a non-negative integer; false otherwise
//     bool GetInt64(int64_t& out) const;    // an integer in int64's range
//     bool GetDouble(double& out) const;    // any number
//     bool GetString(std::string_view& out) const;  // valid while the document lives
//     // fn(std::string_view key, JsonElement value) -> Status, in the order above; the first
//     // error stops the walk. Precondition: kind() is kObject (resp. kArray).
//     template <typename Fn> Status ForEachMember(Fn&& fn) const;
//     template <typename Fn> Status ForEachItem(Fn&& fn) const;   // fn(JsonElement) -> Status
//   };
//   class JsonDocument {
//     // Parses `text`; the error is "invalid JSON (...)" without a prefix.
//     static Result<JsonDocument> Parse(std::string_view text);
//     JsonElement root() const;
//   };
