#include "memfit/json.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

namespace memfit {
namespace {

// Python's json module writes float('nan') and float('inf') as these bare tokens (transformers'
// config.json of Nemotron-H holds "time_step_limit": [0.0, Infinity]). They are not JSON: the scan
// below turns each into a string marked by a prefix no real string starts with, and the parse
// callback turns those strings back into the double they stand for.
constexpr std::string_view kPythonNaN = "NaN";
constexpr std::string_view kPythonInfinity = "Infinity";
constexpr std::string_view kPythonMinusInfinity = "-Infinity";
constexpr std::string_view kSentinelText = "\\u0000memfit-python-constant:";  // as JSON text
constexpr std::string_view kSentinelPrefix("\0memfit-python-constant:", 24);  // once parsed

}  // namespace

std::string_view JsonTypeName(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "object";
    case nlohmann::json::value_t::array: return "array";
    case nlohmann::json::value_t::string: return "string";
    case nlohmann::json::value_t::boolean: return "boolean";
    case nlohmann::json::value_t::number_integer: return "integer";
    case nlohmann::json::value_t::number_unsigned: return "integer";
    case nlohmann::json::value_t::number_float: return "number";
    default: return "value";
  }
}

std::string DumpJson(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<nlohmann::json> ParseJson(std::string_view text, std::string_view what,
                                 const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return MakeError("{}: JSON of {} bytes exceeds the limit of {} bytes", what, text.size(),
                     limits.max_bytes);
  }
  // nlohmann's parser is recursive; reject deep nesting before it recurses. A streaming scan that
  // skips strings is cheap and exact. The same scan finds Python's NaN / Infinity / -Infinity.
  uint32_t depth = 0;
  bool in_string = false;
  std::string rewritten;  // the text with Python's constants replaced, when it has any
  size_t copied = 0;      // bytes of `text` already moved into `rewritten`
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (limits.python_constants && (c == 'N' || c == 'I' || c == '-')) {
      std::string_view rest = text.substr(i);
      std::string_view token = rest.starts_with("NaN")         ? kPythonNaN
                               : rest.starts_with("Infinity")  ? kPythonInfinity
                               : rest.starts_with("-Infinity") ? kPythonMinusInfinity
                                                               : std::string_view();
      if (!token.empty()) {
        rewritten.append(text.substr(copied, i - copied));
        rewritten += '"';
        rewritten += kSentinelText;
        rewritten.append(token);
        rewritten += '"';
        i += token.size() - 1;
        copied = i + 1;
        continue;
      }
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > limits.max_depth) {
        return MakeError("{}: JSON nested deeper than {} levels at byte {}", what, limits.max_depth,
                         i);
      }
    } else if (c == '}' || c == ']') {
      if (depth > 0) --depth;
    }
  }
  // Duplicate keys are an error (nlohmann keeps the last silently): track the keys of every open
  // object.
  std::vector<std::unordered_set<std::string>> open_keys;
  std::string duplicate;
  auto callback = [&](int /*depth*/, nlohmann::json::parse_event_t event,
                      nlohmann::json& parsed) -> bool {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      open_keys.emplace_back();
    } else if (event == Event::object_end) {
      if (!open_keys.empty()) open_keys.pop_back();
    } else if (event == Event::key && !open_keys.empty()) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (!open_keys.back().insert(key).second && duplicate.empty()) duplicate = key;
    } else if (event == Event::value && !rewritten.empty() && parsed.is_string()) {
      const auto& value = parsed.get_ref<const std::string&>();
      if (value.starts_with(kSentinelPrefix)) {
        std::string_view token = std::string_view(value).substr(kSentinelPrefix.size());
        parsed = token == kPythonNaN ? std::numeric_limits<double>::quiet_NaN()
                 : token == kPythonInfinity ? std::numeric_limits<double>::infinity()
                                            : -std::numeric_limits<double>::infinity();
      }
    }
    return true;
  };
  if (!rewritten.empty()) {
    rewritten.append(text.substr(copied));
    text = rewritten;
  }
  try {
    auto json = nlohmann::json::parse(text.begin(), text.end(), callback);
    if (!duplicate.empty()) return MakeError("{}: duplicate key \"{}\"", what, duplicate);
    return json;
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    std::string message = e.what();
    auto pos = message.find("] ");
    if (pos != std::string::npos) message = message.substr(pos + 2);
    return MakeError("{}: invalid JSON: {}", what, message);
  } catch (const std::exception& e) {
    return MakeError("{}: invalid JSON: {}", what, e.what());
  }
}

}  // namespace memfit
