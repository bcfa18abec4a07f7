// safetensors header reader.
//
// Byte layout (huggingface/safetensors README, "Format"):
//   [0, 8)        u64 little-endian N: length of the JSON header
//   [8, 8+N)      UTF-8 JSON object: {"name": {"dtype": "F16", "shape": [..],
//                 "data_offsets": [begin, end]}, ..., "__metadata__": {str: str}}, may be padded
//                 with trailing spaces
//   [8+N, EOF)    the data buffer; offsets are relative to its start, end exclusive, no holes
//
// The header is parsed with simdjson's DOM API (runtime CPU dispatch; formats/json_dom.h, nlohmann
// in the wasm build) straight into SafetensorsTensorInfo, so a 91k-tensor checkpoint parses in
// milliseconds.

#include "memfit/safetensors.h"

#include <algorithm>
#include <unordered_set>

#include "formats/json_dom.h"
#include "memfit/checked_math.h"

namespace memfit {
namespace {

// Reads the array of non-negative integers at `value` into `out`.
Status ReadUintArray(JsonElement value, std::string_view tensor, std::string_view field,
                     std::vector<uint64_t>& out) {
  if (value.kind() != JsonKind::kArray) {
    return MakeError("tensor \"{}\": \"{}\" must be an array of integers", tensor, field);
  }
  return value.ForEachItem([&](JsonElement element) -> Status {
    uint64_t n = 0;
    if (element.GetUint64(n)) {
      out.push_back(n);
      return Ok{};
    }
    int64_t negative = 0;
    double number = 0;
    const JsonKind kind = element.kind();
    if (kind == JsonKind::kArray) {
      return MakeError("tensor \"{}\": unexpected array in \"{}\"", tensor, field);
    }
    if (kind == JsonKind::kNumber && element.GetInt64(negative)) {
      return MakeError("tensor \"{}\": negative value {} in \"{}\"", tensor, negative, field);
    }
    if (kind == JsonKind::kNumber && element.GetDouble(number)) {
      return MakeError("tensor \"{}\": non-integer value in \"{}\"", tensor, field);
    }
    return MakeError("tensor \"{}\": \"{}\" must hold integers", tensor, field);
  });
}

Result<SafetensorsTensorInfo> ReadTensor(JsonElement value, std::string_view name) {
  if (value.kind() != JsonKind::kObject) return MakeError("\"{}\": expected an object", name);
  SafetensorsTensorInfo info;
  info.name = std::string(name);
  bool seen_dtype = false, seen_shape = false, seen_offsets = false;
  MEMFIT_RETURN_IF_ERROR(value.ForEachMember([&](std::string_view key, JsonElement field) -> Status {
    if (key == "dtype") {
      std::string_view dtype_name;
      if (!field.GetString(dtype_name)) {
        return MakeError("tensor \"{}\": \"dtype\" must be a string", name);
      }
      auto dtype = ParseSafetensorsDtype(dtype_name);
      if (!dtype) return MakeError("tensor \"{}\": {}", name, dtype.error().message);
      info.dtype = *dtype;
      seen_dtype = true;
    } else if (key == "shape") {
      MEMFIT_RETURN_IF_ERROR(ReadUintArray(field, name, "shape", info.shape));
      seen_shape = true;
    } else if (key == "data_offsets") {
      std::vector<uint64_t> offsets;
      MEMFIT_RETURN_IF_ERROR(ReadUintArray(field, name, "data_offsets", offsets));
      if (offsets.size() != 2) {
        return MakeError("tensor \"{}\": \"data_offsets\" must hold 2 integers, got {}", name,
                         offsets.size());
      }
      info.begin = offsets[0];
      info.end = offsets[1];
      seen_offsets = true;
    } else {
      // Unknown fields are ignored (as serde does), but only scalars.
      const JsonKind kind = field.kind();
      if (kind == JsonKind::kObject || kind == JsonKind::kArray) {
        return MakeError("tensor \"{}\": unexpected {} in \"{}\"", name,
                         kind == JsonKind::kObject ? "object" : "array", key);
      }
    }
    return Ok{};
  }));
  if (!seen_dtype) return MakeError("tensor \"{}\": missing \"dtype\"", name);
  if (!seen_shape) return MakeError("tensor \"{}\": missing \"shape\"", name);
  if (!seen_offsets) return MakeError("tensor \"{}\": missing \"data_offsets\"", name);
  return info;
}

Status ReadMetadata(JsonElement value, std::map<std::string, std::string>& out) {
  if (value.kind() != JsonKind::kObject) return MakeError("__metadata__ must be an object");
  return value.ForEachMember([&](std::string_view key, JsonElement field) -> Status {
    std::string_view text;
    if (!field.GetString(text)) {
      return MakeError("__metadata__ \"{}\": values must be strings", key);
    }
    if (!out.emplace(std::string(key), std::string(text)).second) {
      return MakeError("__metadata__: duplicate key \"{}\"", key);
    }
    return Ok{};
  });
}

Status ValidateTensor(const SafetensorsTensorInfo& t) {
  auto numel = CheckedProduct(t.shape);
  if (!numel) return MakeError("tensor \"{}\": element count overflows 64 bits", t.name);
  auto bits = CheckedMul(*numel, DtypeBits(t.dtype));
  if (!bits) return MakeError("tensor \"{}\": byte size overflows 64 bits", t.name);
  if (*bits % 8 != 0) {
    return MakeError("tensor \"{}\": {} elements of {} do not fill whole bytes", t.name, *numel,
                     DtypeName(t.dtype));
  }
  if (t.end < t.begin) {
    return MakeError("tensor \"{}\": data_offsets [{}, {}] end before they begin", t.name, t.begin,
                     t.end);
  }
  if (t.end - t.begin != *bits / 8) {
    return MakeError("tensor \"{}\": data_offsets [{}, {}] hold {} bytes but shape and dtype need {}",
                     t.name, t.begin, t.end, t.end - t.begin, *bits / 8);
  }
  return Ok{};
}

}  // namespace

Result<SafetensorsHeader> ParseSafetensorsHeaderJson(std::string_view json_text,
                                                     std::optional<uint64_t> data_bytes,
                                                     const SafetensorsLimits& limits) {
  if (json_text.size() > limits.max_header_bytes) {
    return MakeError("safetensors: header of {} bytes exceeds the limit of {} bytes",
                     json_text.size(), limits.max_header_bytes);
  }
  size_t first = json_text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || json_text[first] != '{') {
    return MakeError("safetensors: header is not a JSON object");
  }
  SafetensorsHeader header;
  header.header_bytes = json_text.size();
  {
    auto document = JsonDocument::Parse(json_text);
    if (!document) return Wrap(document.error(), "safetensors");
    const JsonElement root = document->root();
    if (root.kind() != JsonKind::kObject) return MakeError("safetensors: header is not a JSON object");
    auto status = root.ForEachMember([&](std::string_view key, JsonElement value) -> Status {
      if (key == "__metadata__") return ReadMetadata(value, header.metadata);
      if (header.tensors.size() >= limits.max_tensors) {
        return MakeError("more than {} tensors", limits.max_tensors);
      }
      MEMFIT_ASSIGN_OR_RETURN(SafetensorsTensorInfo tensor, ReadTensor(value, key));
      header.tensors.push_back(std::move(tensor));
      return Ok{};
    });
    if (!status) return Wrap(status.error(), "safetensors");
  }
  {
    std::unordered_set<std::string_view> names;
    names.reserve(header.tensors.size());
    for (const auto& t : header.tensors) {
      if (!names.insert(t.name).second) return MakeError("safetensors: duplicate tensor \"{}\"", t.name);
    }
  }
  for (const auto& t : header.tensors) {
    auto status = ValidateTensor(t);
    if (!status) return Wrap(status.error(), "safetensors");
  }
  std::stable_sort(header.tensors.begin(), header.tensors.end(),
                   [](const auto& a, const auto& b) {
                     return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
                   });
  // No holes and no overlaps: each tensor starts where the previous one ended.
  uint64_t expected = 0;
  for (const auto& t : header.tensors) {
    if (t.begin != expected) {
      return MakeError("safetensors: tensor \"{}\" starts at byte {} of the data buffer, expected {} ({})",
                       t.name, t.begin, expected, t.begin > expected ? "a hole" : "an overlap");
    }
    expected = t.end;
  }
  header.data_bytes = expected;
  if (data_bytes && *data_bytes != expected) {
    return MakeError("safetensors: tensors cover {} bytes but the data buffer holds {} bytes",
                     expected, *data_bytes);
  }
  return header;
}

Result<SafetensorsHeader> ReadSafetensorsHeader(ByteSource& source,
                                                const SafetensorsLimits& limits) {
  auto where = source.Name();
  MEMFIT_ASSIGN_OR_RETURN(uint64_t size, source.Size());
  if (size < 8) {
    return MakeError("{}: file of {} bytes is too short for a safetensors header", where, size);
  }
  MEMFIT_ASSIGN_OR_RETURN(std::string prefix, source.Read(0, 8));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(prefix[i]);
  if (n > limits.max_header_bytes) {
    return MakeError("{}: safetensors header length {} exceeds the limit of {} bytes", where, n,
                     limits.max_header_bytes);
  }
  if (n > size - 8) {
    return MakeError("{}: safetensors header length {} exceeds file size {}", where, n, size);
  }
  if (n < 2) return MakeError("{}: safetensors header length {} is too small", where, n);
  MEMFIT_ASSIGN_OR_RETURN(std::string json_text, source.Read(8, static_cast<size_t>(n)));
  auto header = ParseSafetensorsHeaderJson(json_text, size - 8 - n, limits);
  if (!header) return Wrap(header.error(), where);
  return header;
}

}  // namespace memfit
