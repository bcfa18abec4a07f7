#include "formats/json.h"

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

// Builds the document from nlohmann's SAX events (json::parse with a callback rescans an object's
// members at the end of each child object: quadratic in a map of thousands of objects, such as a
// ModelOpt "quantized_layers" list). It also rejects duplicate keys (nlohmann keeps the last
// silently) and turns the Python-constant sentinels back into doubles.
class DomBuilder {
 public:
  DomBuilder(nlohmann::json& root, bool has_sentinels) : root_(root), sentinels_(has_sentinels) {}
  const std::string& error() const { return error_; }

  bool null() { return Put(nullptr) != nullptr; }
  bool boolean(bool v) { return Put(v) != nullptr; }
  bool number_integer(nlohmann::json::number_integer_t v) { return Put(v) != nullptr; }
  bool number_unsigned(nlohmann::json::number_unsigned_t v) { return Put(v) != nullptr; }
  bool number_float(nlohmann::json::number_float_t v, const std::string&) {
    return Put(v) != nullptr;
  }
  bool string(std::string& v) {
    if (sentinels_ && v.starts_with(kSentinelPrefix)) {
      std::string_view token = std::string_view(v).substr(kSentinelPrefix.size());
      return Put(token == kPythonNaN        ? std::numeric_limits<double>::quiet_NaN()
                 : token == kPythonInfinity ? std::numeric_limits<double>::infinity()
                                            : -std::numeric_limits<double>::infinity()) != nullptr;
    }
    return Put(std::move(v)) != nullptr;
  }
  bool binary(nlohmann::json::binary_t& v) { return Put(nlohmann::json::binary(std::move(v))) != nullptr; }
  bool start_object(size_t) {
    nlohmann::json* object = Put(nlohmann::json::object());
    if (!object) return false;
    stack_.push_back(object);
    keys_.emplace_back();
    return true;
  }
  bool key(std::string& k) {
    if (!keys_.back().insert(k).second) {
      error_ = "duplicate key \"" + k + "\"";
      return false;
    }
    key_ = std::move(k);
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }
  bool start_array(size_t) {
    nlohmann::json* array = Put(nlohmann::json::array());
    if (!array) return false;
    stack_.push_back(array);
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    std::string message = e.what();
    auto pos = message.find("] ");
    if (pos != std::string::npos) message = message.substr(pos + 2);
    error_ = "invalid JSON: " + message;
    return false;
  }

 private:
  // Stores `value` where the document is now (the root, the open array, or the open object under
  // the last key) and returns where it went. Containers on the stack stay put: an array only
  // grows while it is the innermost open container, and object members never move.
  template <typename T>
  nlohmann::json* Put(T&& value) {
    if (stack_.empty()) {
      root_ = std::forward<T>(value);
      return &root_;
    }
    nlohmann::json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(nlohmann::json(std::forward<T>(value)));
      return &top.back();
    }
    nlohmann::json& slot = top[key_];
    slot = std::forward<T>(value);
    return &slot;
  }

  nlohmann::json& root_;
  bool sentinels_;
  std::vector<nlohmann::json*> stack_;
  std::vector<std::unordered_set<std::string>> keys_;
  std::string key_;
  std::string error_;
};

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
  if (!rewritten.empty()) {
    rewritten.append(text.substr(copied));
    text = rewritten;
  }
  nlohmann::json root;
  DomBuilder builder(root, !rewritten.empty());
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const std::exception& e) {
    return MakeError("{}: invalid JSON: {}", what, e.what());
  }
  if (!ok || !builder.error().empty()) {
    return MakeError("{}: {}", what, builder.error().empty() ? "invalid JSON" : builder.error());
  }
  return root;
}

}  // namespace memfit
