#pragma once
// JsonDocument / JsonElement over simdjson's DOM (see formats/json_dom.h). Include json_dom.h.

#include <memory>
#include <utility>

#include <simdjson.h>

namespace memfit {

class JsonElement {
 public:
  explicit JsonElement(simdjson::dom::element element) : element_(element) {}

  JsonKind kind() const {
    using T = simdjson::dom::element_type;
    switch (element_.type()) {
      case T::ARRAY: return JsonKind::kArray;
      case T::OBJECT: return JsonKind::kObject;
      case T::INT64:
      case T::UINT64:
      case T::DOUBLE: return JsonKind::kNumber;
      case T::STRING: return JsonKind::kString;
      case T::BOOL: return JsonKind::kBool;
      case T::NULL_VALUE: return JsonKind::kNull;
    }
    return JsonKind::kNull;
  }
  bool GetUint64(uint64_t& out) const { return !element_.get_uint64().get(out); }
  bool GetInt64(int64_t& out) const { return !element_.get_int64().get(out); }
  bool GetDouble(double& out) const { return !element_.get_double().get(out); }
  bool GetString(std::string_view& out) const { return !element_.get_string().get(out); }

  template <typename Fn>
  Status ForEachMember(Fn&& fn) const {
    simdjson::dom::object object;
    if (element_.get_object().get(object)) return Ok{};
    for (auto field : object) {
      Status status = fn(std::string_view(field.key), JsonElement(field.value));
      if (!status) return status;
    }
    return Ok{};
  }
  template <typename Fn>
  Status ForEachItem(Fn&& fn) const {
    simdjson::dom::array array;
    if (element_.get_array().get(array)) return Ok{};
    for (auto item : array) {
      Status status = fn(JsonElement(item));
      if (!status) return status;
    }
    return Ok{};
  }

 private:
  simdjson::dom::element element_;
};

class JsonDocument {
 public:
  static Result<JsonDocument> Parse(std::string_view text) {
    JsonDocument document;
    document.state_ = std::make_unique<State>(text);
    if (auto error = document.state_->parser.parse(document.state_->padded).get(document.state_->root)) {
      return MakeError("invalid JSON ({})", simdjson::error_message(error));
    }
    return document;
  }
  JsonElement root() const { return JsonElement(state_->root); }

 private:
  struct State {
    explicit State(std::string_view text) : padded(text) {}
    simdjson::padded_string padded;
    simdjson::dom::parser parser;
    simdjson::dom::element root;
  };
  std::unique_ptr<State> state_;  // the parser owns the tape the elements point into
};

}  // namespace memfit
