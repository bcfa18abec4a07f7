#pragma once
// safetensors: 8-byte little-endian header length N, N bytes of UTF-8 JSON, then the data buffer.
// Reference: huggingface/safetensors README "Format" and safetensors/src/tensor.rs; see
// docs/formats.md for the checks memfit performs.

#include <cstdint>
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

// A sharded checkpoint's index: model.safetensors.index.json or pytorch_model.bin.index.json.
struct WeightIndex {
  std::optional<uint64_t> total_size;  // "metadata"."total_size" (some old indexes write a float)
  std::map<std::string, std::string> weight_map;  // tensor name -> shard file name
  std::vector<std::string> shards;                // distinct shard names, sorted
};

Result<WeightIndex> ParseWeightIndex(std::string_view json_text, std::string_view what);

}  // namespace memfit
