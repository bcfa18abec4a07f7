#pragma once
// JsonDocument / JsonElement over ParseJson's nlohmann document (see formats/json_dom.h), for the
// wasm build. Include json_dom.h.

#include <limits>
#include <memory>
#include <utility>

#include "formats/json.h"

namespace memfit {

class JsonElement {
 public:
  explicit JsonElement(const nlohmann::json& value) : value_(&value) {}

  JsonKind kind() const {
    switch (value_->type()) {
      case nlohmann::json::value_t::array: return JsonKind::kArray;
      case nlohmann::json::value_t::object: return JsonKind::kObject;
      case nlohmann::json::value_t::number_integer:
      case nlohmann::json::value_t::number_unsigned:
      case nlohmann::json::value_t::number_float: return JsonKind::kNumber;
      case nlohmann::json::value_t::string: return JsonKind::kString;
      case nlohmann::json::value_t::boolean: return JsonKind::kBool;
      default: return JsonKind::kNull;
    }
  }
  bool GetUint64(uint64_t& out) const {
    if (value_->is_number_unsigned()) {
      out = value_->get<uint64_t>();
      return true;
    }
    if (value_->is_number_integer() && value_->get<int64_t>() >= 0) {
      out = static_cast<uint64_t>(value_->get<int64_t>());
      return true;
    }
    return false;
  }
  bool GetInt64(int64_t& out) const {
    if (value_->is_number_unsigned()) {
      if (value_->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return false;
      }
      out = static_cast<int64_t>(value_->get<uint64_t>());
      return true;
    }
    if (!value_->is_number_integer()) return false;
    out = value_->get<int64_t>();
    return true;
  }
  bool GetDouble(double& out) const {
    if (!value_->is_number()) return false;
    out = value_->get<double>();
    return true;
  }
  bool GetString(std::string_view& out) const {
    if (!value_->is_string()) return false;
    out = value_->get_ref<const std::string&>();
    return true;
  }

  template <typename Fn>
  Status ForEachMember(Fn&& fn) const {
    if (!value_->is_object()) return Ok{};
    for (const auto& [key, value] : value_->items()) {
      Status status = fn(std::string_view(key), JsonElement(value));
      if (!status) return status;
    }
    return Ok{};
  }
  template <typename Fn>
  Status ForEachItem(Fn&& fn) const {
    if (!value_->is_array()) return Ok{};
    for (const auto& item : *value_) {
      Status status = fn(JsonElement(item));
      if (!status) return status;
    }
    return Ok{};
  }

 private:
  const nlohmann::json* value_;
};

class JsonDocument {
 public:
  static Result<JsonDocument> Parse(std::string_view text) {
    auto root = ParseJson(text, "");
    if (!root) {
      std::string_view message = root.error().message;
      if (message.starts_with(": ")) message.remove_prefix(2);  // ParseJson's `what` is empty
      return MakeError("{}", message);
    }
    JsonDocument document;
    document.root_ = std::make_unique<nlohmann::json>(std::move(*root));
    return document;
  }
  JsonElement root() const { return JsonElement(*root_); }

 private:
  std::unique_ptr<nlohmann::json> root_;
};

}  // namespace memfit
