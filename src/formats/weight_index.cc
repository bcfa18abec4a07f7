// Sharded checkpoint indexes: {"metadata": {"total_size": BYTES}, "weight_map": {tensor: shard}}.
// total_size is the sum of tensor storage bytes with shared storage counted once
// (huggingface_hub serialization/_base.py); old indexes write it as a float, some have no metadata.

#include <cmath>
#include <set>

#include "memfit/json.h"
#include "memfit/safetensors.h"

namespace memfit {

Result<WeightIndex> ParseWeightIndex(std::string_view json_text, std::string_view what) {
  MEMFIT_ASSIGN_OR_RETURN(nlohmann::json json, ParseJson(json_text, what));
  if (!json.is_object()) return MakeError("{}: expected a JSON object", what);
  WeightIndex index;
  if (auto it = json.find("metadata"); it != json.end() && it->is_object()) {
    if (auto ts = it->find("total_size"); ts != it->end() && !ts->is_null()) {
      if (ts->is_number_unsigned() || ts->is_number_integer()) {
        if (ts->is_number_integer() && ts->get<int64_t>() < 0) {
          return MakeError("{}: metadata.total_size is negative", what);
        }
        index.total_size = ts->get<uint64_t>();
      } else if (ts->is_number_float()) {
        double value = ts->get<double>();
        if (!(value >= 0) || value > 1.8e19 || value != std::floor(value)) {
          return MakeError("{}: metadata.total_size {} is not a byte count", what, value);
        }
        index.total_size = static_cast<uint64_t>(value);
      } else {
        return MakeError("{}: metadata.total_size must be a number, got {}", what,
                         ts->type_name());
      }
    }
  }
  auto map = json.find("weight_map");
  if (map == json.end()) return MakeError("{}: missing \"weight_map\"", what);
  if (!map->is_object()) return MakeError("{}: \"weight_map\" must be an object", what);
  std::set<std::string> shards;
  for (const auto& [tensor, shard] : map->items()) {
    if (!shard.is_string()) {
      return MakeError("{}: weight_map[\"{}\"] must be a file name string", what, tensor);
    }
    const auto& file = shard.get_ref<const std::string&>();
    if (file.empty() || file.find("..") != std::string::npos || file.front() == '/') {
      return MakeError("{}: weight_map[\"{}\"] names an unsafe file \"{}\"", what, tensor, file);
    }
    index.weight_map.emplace(tensor, file);
    shards.insert(file);
  }
  index.shards.assign(shards.begin(), shards.end());
  return index;
}

}  // namespace memfit
