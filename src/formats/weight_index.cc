// Sharded checkpoint indexes: {"metadata": {"total_size": BYTES}, "weight_map": {tensor: shard}}.
// total_size is the sum of tensor storage bytes with shared storage counted once
// (huggingface_hub serialization/_base.py); old indexes write it as a float, some have no metadata.
// Parsed with simdjson's DOM API: DeepSeek-V3's index maps ~91k tensors.

#include <cmath>
#include <set>

#include <simdjson.h>

#include "memfit/safetensors.h"

namespace memfit {
namespace {

bool IsNumber(simdjson::dom::element_type type) {
  using T = simdjson::dom::element_type;
  return type == T::INT64 || type == T::UINT64 || type == T::DOUBLE;
}

Status ReadTotalSize(simdjson::dom::element metadata, std::string_view what,
                     std::optional<uint64_t>& out) {
  simdjson::dom::object object;
  if (metadata.get_object().get(object)) return Ok{};  // metadata that is not an object is ignored
  for (auto field : object) {
    std::string_view key;
    key = field.key;
    if (key != "total_size") continue;
    simdjson::dom::element value = field.value;
    simdjson::dom::element_type type;
    type = value.type();
    if (type == simdjson::dom::element_type::NULL_VALUE) return Ok{};
    if (!IsNumber(type)) {
      return MakeError("{}: metadata.total_size must be a number", what);
    }
    uint64_t n = 0;
    if (!value.get_uint64().get(n)) {
      out = n;
      return Ok{};
    }
    double d = 0;
    if (value.get_double().get(d) || !(d >= 0) || d > 1.8e19 || d != std::floor(d)) {
      return MakeError("{}: metadata.total_size is not a byte count", what);
    }
    out = static_cast<uint64_t>(d);
  }
  return Ok{};
}

}  // namespace

Result<WeightIndex> ParseWeightIndex(std::string_view json_text, std::string_view what) {
  constexpr size_t kMaxIndexBytes = 64u << 20;
  if (json_text.size() > kMaxIndexBytes) {
    return MakeError("{}: index of {} bytes exceeds the limit of {} bytes", what, json_text.size(),
                     kMaxIndexBytes);
  }
  simdjson::padded_string padded(json_text);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto error = parser.parse(padded).get(doc)) {
    return MakeError("{}: invalid JSON ({})", what, simdjson::error_message(error));
  }
  simdjson::dom::object root;
  if (doc.get_object().get(root)) return MakeError("{}: expected a JSON object", what);
  WeightIndex index;
  bool seen_map = false;
  std::set<std::string> shards;
  for (auto field : root) {
    std::string_view key;
    key = field.key;
    if (key == "metadata") {
      MEMFIT_RETURN_IF_ERROR(ReadTotalSize(field.value, what, index.total_size));
    } else if (key == "weight_map") {
      if (seen_map) return MakeError("{}: duplicate key \"weight_map\"", what);
      seen_map = true;
      simdjson::dom::object map;
      if (field.value.get_object().get(map)) {
        return MakeError("{}: \"weight_map\" must be an object", what);
      }
      std::string_view last_file;
      for (auto entry : map) {
        std::string_view tensor, file;
        tensor = entry.key;
        std::string tensor_name(tensor);
        if (entry.value.get_string().get(file)) {
          return MakeError("{}: weight_map[\"{}\"] must be a file name string", what, tensor_name);
        }
        if (file.empty() || file.find("..") != std::string_view::npos || file.front() == '/') {
          return MakeError("{}: weight_map[\"{}\"] names an unsafe file \"{}\"", what, tensor_name,
                           file);
        }
        if (!index.weight_map.emplace(tensor_name, std::string(file)).second) {
          return MakeError("{}: duplicate key \"{}\"", what, tensor_name);
        }
        if (file != last_file) {
          shards.emplace(file);
          last_file = file;
        }
      }
    }
  }
  if (!seen_map) return MakeError("{}: missing \"weight_map\"", what);
  index.shards.assign(shards.begin(), shards.end());
  return index;
}

}  // namespace memfit
