#pragma once
// safetensors: 8-byte little-endian header length N, N bytes of UTF-8 JSON, then the data buffer.
// Reference: huggingface/safetensors README "Format" and safetensors/src/tensor.rs; see
// docs/formats.md for the checks memfit performs.

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/byte_source.h"
#include "memfit/dtype.h"
#include "memfit/result.h"

namespace memfit {

struct SafetensorsTensorInfo {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<uint64_t> shape;
  uint64_t begin = 0;  // "data_offsets"[0], relative to the start of the data buffer
  uint64_t end = 0;    // "data_offsets"[1], exclusive
  uint64_t bytes() const { return end - begin; }
};

struct SafetensorsHeader {
  uint64_t header_bytes = 0;  // N, the JSON length (without the 8-byte prefix)
  uint64_t data_bytes = 0;    // bytes of the data buffer described by the header
  std::vector<SafetensorsTensorInfo> tensors;  // in file order (sorted by begin offset)
  std::map<std::string, std::string> metadata;  // "__metadata__"
};

struct SafetensorsLimits {
  // The safetensors library's MAX_HEADER_SIZE; huggingface_hub uses 25,000,000.
  uint64_t max_header_bytes = 100'000'000;
  uint64_t max_tensors = 10'000'000;
};

// Reads and validates the header of a safetensors file. Checks: the header length against the
// source size and the cap; JSON well-formed and an object; every dtype known; shapes of
// non-negative integers whose element count does not overflow; data_offsets in order, without
// holes or overlaps, inside the buffer, each equal to numel x bits / 8; no duplicate names; the
// buffer ends where the file ends.
Result<SafetensorsHeader> ReadSafetensorsHeader(ByteSource& source,
                                                const SafetensorsLimits& limits = {});

// Parses the JSON header alone (as read from a file or a cache). When `data_bytes` is given, the
// offsets must account for exactly that many bytes.
Result<SafetensorsHeader> ParseSafetensorsHeaderJson(std::string_view json_text,
                                                     std::optional<uint64_t> data_bytes,
                                                     const SafetensorsLimits& limits = {});

// An index's "weight_map": tensor name -> shard file name, sorted by tensor name. The names live in
// one buffer and each entry is an offset, a length and the shard's number in a table of the
// distinct shard names: DeepSeek-V3's 90k-tensor index is three allocations, not 90k map nodes of
// two strings each (it is rebuilt from memfit's cache on every cached run). Iterating yields
// (tensor name, shard file name) pairs in tensor name order, as a std::map would.
class WeightMap {
 public:
  struct Entry {
    uint64_t name_offset = 0;  // in the names buffer given to Make
    uint32_t name_bytes = 0;
    uint32_t shard = 0;        // position in shard_names()
  };
  using value_type = std::pair<std::string_view, const std::string&>;
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using difference_type = std::ptrdiff_t;
    using value_type = WeightMap::value_type;
    using reference = value_type;
    const_iterator() = default;
    value_type operator*() const { return {map_->tensor(i_), map_->shard_names_[map_->entries_[i_].shard]}; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++i_;
      return old;
    }
    bool operator==(const const_iterator& other) const { return i_ == other.i_; }

   private:
    friend class WeightMap;
    const_iterator(const WeightMap* map, size_t i) : map_(map), i_(i) {}
    const WeightMap* map_ = nullptr;
    size_t i_ = 0;
  };

  WeightMap() = default;
  // Checks what the type promises: shard names strictly increasing and each named by an entry;
  // entries inside `names`, strictly increasing by tensor name, shard numbers in range.
  // nullopt otherwise.
  static std::optional<WeightMap> Make(std::vector<std::string> shard_names, std::string names,
                                       std::vector<Entry> entries);

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, entries_.size()}; }
  // Entry i: its tensor name and shard number (i < size()).
  std::string_view tensor(size_t i) const {
    return std::string_view(names_).substr(entries_[i].name_offset, entries_[i].name_bytes);
  }
  uint32_t shard(size_t i) const { return entries_[i].shard; }
  // The shard file of `tensor`, or nullptr (binary search).
  const std::string* find(std::string_view tensor) const;
  bool contains(std::string_view tensor) const { return find(tensor) != nullptr; }
  const std::vector<std::string>& shard_names() const { return shard_names_; }
  bool operator==(const WeightMap& other) const;

 private:
  std::vector<std::string> shard_names_;
  std::string names_;
  std::vector<Entry> entries_;
};

// A sharded checkpoint's index: model.safetensors.index.json or pytorch_model.bin.index.json.
struct WeightIndex {
  std::optional<uint64_t> total_size;  // "metadata"."total_size" (some old indexes write a float)
  WeightMap weight_map;                // tensor name -> shard file name
  // The distinct shard names, sorted.
  const std::vector<std::string>& shards() const { return weight_map.shard_names(); }
};

Result<WeightIndex> ParseWeightIndex(std::string_view json_text, std::string_view what);

}  // namespace memfit
