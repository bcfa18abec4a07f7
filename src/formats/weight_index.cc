// Sharded checkpoint indexes: {"metadata": {"total_size": BYTES}, "weight_map": {tensor: shard}}.
// total_size is the sum of tensor storage bytes with shared storage counted once
// (huggingface_hub serialization/_base.py); old indexes write it as a float, some have no metadata.
// Parsed with simdjson's DOM API (formats/json_dom.h): DeepSeek-V3's index maps ~91k tensors.

#include <algorithm>
#include <cmath>
#include <map>

#include "formats/json_dom.h"
#include "memfit/safetensors.h"

namespace memfit {
namespace {

Status ReadTotalSize(JsonElement metadata, std::string_view what, std::optional<uint64_t>& out) {
  if (metadata.kind() != JsonKind::kObject) return Ok{};  // metadata that is not an object is ignored
  return metadata.ForEachMember([&](std::string_view key, JsonElement value) -> Status {
    if (key != "total_size") return Ok{};
    const JsonKind kind = value.kind();
    if (kind == JsonKind::kNull) return Ok{};
    if (kind != JsonKind::kNumber) return MakeError("{}: metadata.total_size must be a number", what);
    uint64_t n = 0;
    if (value.GetUint64(n)) {
      out = n;
      return Ok{};
    }
    double d = 0;
    if (!value.GetDouble(d) || !(d >= 0) || d > 1.8e19 || d != std::floor(d)) {
      return MakeError("{}: metadata.total_size is not a byte count", what);
    }
    out = static_cast<uint64_t>(d);
    return Ok{};
  });
}

}  // namespace

std::optional<WeightMap> WeightMap::Make(std::vector<std::string> shard_names, std::string names,
                                         std::vector<Entry> entries) {
  for (size_t i = 1; i < shard_names.size(); ++i) {
    if (!(shard_names[i - 1] < shard_names[i])) return std::nullopt;
  }
  std::vector<bool> named(shard_names.size(), false);
  std::string_view all(names), previous;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.shard >= shard_names.size() || e.name_offset > all.size() ||
        e.name_bytes > all.size() - e.name_offset) {
      return std::nullopt;
    }
    std::string_view tensor = all.substr(e.name_offset, e.name_bytes);
    if (i > 0 && !(previous < tensor)) return std::nullopt;
    previous = tensor;
    named[e.shard] = true;
  }
  for (bool n : named) {
    if (!n) return std::nullopt;
  }
  WeightMap map;
  map.shard_names_ = std::move(shard_names);
  map.names_ = std::move(names);
  map.entries_ = std::move(entries);
  return map;
}

const std::string* WeightMap::find(std::string_view tensor) const {
  size_t lo = 0, hi = entries_.size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (this->tensor(mid) < tensor) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == entries_.size() || this->tensor(lo) != tensor) return nullptr;
  return &shard_names_[entries_[lo].shard];
}

bool WeightMap::operator==(const WeightMap& other) const {
  if (shard_names_ != other.shard_names_ || size() != other.size()) return false;
  for (size_t i = 0; i < size(); ++i) {
    if (tensor(i) != other.tensor(i) || shard(i) != other.shard(i)) return false;
  }
  return true;
}

Result<WeightIndex> ParseWeightIndex(std::string_view json_text, std::string_view what) {
  constexpr size_t kMaxIndexBytes = 64u << 20;
  if (json_text.size() > kMaxIndexBytes) {
    return MakeError("{}: index of {} bytes exceeds the limit of {} bytes", what, json_text.size(),
                     kMaxIndexBytes);
  }
  auto document = JsonDocument::Parse(json_text);
  if (!document) return Wrap(document.error(), what);
  const JsonElement root = document->root();
  if (root.kind() != JsonKind::kObject) return MakeError("{}: expected a JSON object", what);
  WeightIndex index;
  bool seen_map = false;
  // Shard numbers in first-seen order while reading; renumbered in name order afterwards.
  std::vector<WeightMap::Entry> entries;
  std::string names;
  std::vector<std::string> files;
  std::map<std::string_view, uint32_t> file_number;
  std::string_view last_file;
  uint32_t last_number = 0;
  auto read_entry = [&](std::string_view tensor, JsonElement value) -> Status {
    std::string_view file;
    if (!value.GetString(file)) {
      return MakeError("{}: weight_map[\"{}\"] must be a file name string", what, tensor);
    }
    if (file.empty() || file.find("..") != std::string_view::npos || file.front() == '/') {
      return MakeError("{}: weight_map[\"{}\"] names an unsafe file \"{}\"", what, tensor, file);
    }
    if (tensor.size() > UINT32_MAX) return MakeError("{}: a tensor name over 4 GiB", what);
    // Consecutive tensors mostly share a shard: look the name up only when it changes.
    if (entries.empty() || file != last_file) {
      auto [it, added] = file_number.emplace(file, static_cast<uint32_t>(files.size()));
      if (added) files.emplace_back(file);
      last_file = file;
      last_number = it->second;
    }
    entries.push_back({names.size(), static_cast<uint32_t>(tensor.size()), last_number});
    names += tensor;
    return Ok{};
  };
  MEMFIT_RETURN_IF_ERROR(root.ForEachMember([&](std::string_view key, JsonElement value) -> Status {
    if (key == "metadata") return ReadTotalSize(value, what, index.total_size);
    if (key != "weight_map") return Ok{};
    if (seen_map) return MakeError("{}: duplicate key \"weight_map\"", what);
    seen_map = true;
    if (value.kind() != JsonKind::kObject) {
      return MakeError("{}: \"weight_map\" must be an object", what);
    }
    return value.ForEachMember(read_entry);
  }));
  if (!seen_map) return MakeError("{}: missing \"weight_map\"", what);
  // Shards in name order, entries in tensor order (indexes are usually written sorted).
  std::vector<uint32_t> order(files.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return files[a] < files[b]; });
  std::vector<uint32_t> renumber(files.size());
  std::vector<std::string> shard_names;
  shard_names.reserve(files.size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    renumber[order[i]] = i;
    shard_names.push_back(std::move(files[order[i]]));
  }
  for (auto& e : entries) e.shard = renumber[e.shard];
  auto name_of = [&names](const WeightMap::Entry& e) {
    return std::string_view(names).substr(e.name_offset, e.name_bytes);
  };
  auto by_tensor = [&](const WeightMap::Entry& a, const WeightMap::Entry& b) {
    return name_of(a) < name_of(b);
  };
  if (!std::is_sorted(entries.begin(), entries.end(), by_tensor)) {
    std::stable_sort(entries.begin(), entries.end(), by_tensor);
  }
  for (size_t i = 1; i < entries.size(); ++i) {
    if (name_of(entries[i - 1]) == name_of(entries[i])) {
      return MakeError("{}: duplicate key \"{}\"", what, name_of(entries[i]));
    }
  }
  auto weight_map = WeightMap::Make(std::move(shard_names), std::move(names), std::move(entries));
  if (!weight_map) return MakeError("{}: inconsistent weight_map", what);  // not reached
  index.weight_map = std::move(*weight_map);
  return index;
}

}  // namespace memfit
