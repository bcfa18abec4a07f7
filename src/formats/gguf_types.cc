// ggml tensor types and GGUF value types.
// Block sizes and bytes per block: ggml-org/ggml src/ggml-common.h (static_assert on each block
// struct) and src/ggml.c type_traits[] at d99724f; see docs/formats.md and the table in
// docs/reference (gguf-and-llamacpp.md section 1.3). Ids 4/5 (Q4_2, Q4_3) were removed and are
// unknown; 31-33 and 36-38 (runtime-repacked layouts) are kept with their base type's geometry.

#include "memfit/gguf.h"

#include <algorithm>
#include <cctype>

#include "memfit/checked_math.h"

namespace memfit {

const std::vector<GgmlTypeInfo>& GgmlTypes() {
  static const std::vector<GgmlTypeInfo> kTypes = {
      {0, "F32", 1, 4, false, false},
      {1, "F16", 1, 2, false, false},
      {2, "Q4_0", 32, 18, true, false},
      {3, "Q4_1", 32, 20, true, false},
      {6, "Q5_0", 32, 22, true, false},
      {7, "Q5_1", 32, 24, true, false},
      {8, "Q8_0", 32, 34, true, false},
      {9, "Q8_1", 32, 36, true, false},
      {10, "Q2_K", 256, 84, true, false},
      {11, "Q3_K", 256, 110, true, false},
      {12, "Q4_K", 256, 144, true, false},
      {13, "Q5_K", 256, 176, true, false},
      {14, "Q6_K", 256, 210, true, false},
      {15, "Q8_K", 256, 292, true, false},
      {16, "IQ2_XXS", 256, 66, true, false},
      {17, "IQ2_XS", 256, 74, true, false},
      {18, "IQ3_XXS", 256, 98, true, false},
      {19, "IQ1_S", 256, 50, true, false},
      {20, "IQ4_NL", 32, 18, true, false},
      {21, "IQ3_S", 256, 110, true, false},
      {22, "IQ2_S", 256, 82, true, false},
      {23, "IQ4_XS", 256, 136, true, false},
      {24, "I8", 1, 1, false, false},
      {25, "I16", 1, 2, false, false},
      {26, "I32", 1, 4, false, false},
      {27, "I64", 1, 8, false, false},
      {28, "F64", 1, 8, false, false},
      {29, "IQ1_M", 256, 56, true, false},
      {30, "BF16", 1, 2, false, false},
      {31, "Q4_0_4_4", 32, 18, true, true},
      {32, "Q4_0_4_8", 32, 18, true, true},
      {33, "Q4_0_8_8", 32, 18, true, true},
      {34, "TQ1_0", 256, 54, true, false},
      {35, "TQ2_0", 256, 66, true, false},
      {36, "IQ4_NL_4_4", 32, 18, true, true},
      {37, "IQ4_NL_4_8", 32, 18, true, true},
      {38, "IQ4_NL_8_8", 32, 18, true, true},
      {39, "MXFP4", 32, 17, true, false},
      {40, "NVFP4", 64, 36, true, false},
      {41, "Q1_0", 128, 18, true, false},
      {42, "Q2_0", 64, 18, true, false},
  };
  return kTypes;
}

const GgmlTypeInfo* FindGgmlType(uint32_t id) {
  const auto& types = GgmlTypes();
  auto it = std::lower_bound(types.begin(), types.end(), id,
                             [](const GgmlTypeInfo& t, uint32_t v) { return t.id < v; });
  return it != types.end() && it->id == id ? &*it : nullptr;
}

const GgmlTypeInfo* FindGgmlTypeByName(std::string_view name) {
  for (const auto& t : GgmlTypes()) {
    if (t.name.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i) {
      same = std::toupper(static_cast<unsigned char>(name[i])) == t.name[i];
    }
    if (same) return &t;
  }
  return nullptr;
}

Result<uint64_t> GgmlRowBytes(const GgmlTypeInfo& type, uint64_t elements) {
  if (elements % type.block_elements != 0) {
    return MakeError("{} elements are not a whole number of {} blocks of {}", elements, type.name,
                     type.block_elements);
  }
  auto bytes = CheckedMul(elements / type.block_elements, type.block_bytes);
  if (!bytes) return MakeError("size of {} {} elements overflows 64 bits", elements, type.name);
  return *bytes;
}

std::string_view GgufValueTypeName(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUint8: return "uint8";
    case GgufValueType::kInt8: return "int8";
    case GgufValueType::kUint16: return "uint16";
    case GgufValueType::kInt16: return "int16";
    case GgufValueType::kUint32: return "uint32";
    case GgufValueType::kInt32: return "int32";
    case GgufValueType::kFloat32: return "float32";
    case GgufValueType::kBool: return "bool";
    case GgufValueType::kString: return "string";
    case GgufValueType::kArray: return "array";
    case GgufValueType::kUint64: return "uint64";
    case GgufValueType::kInt64: return "int64";
    case GgufValueType::kFloat64: return "float64";
  }
  return "unknown";
}

std::optional<uint64_t> GgufValue::AsUint() const {
  switch (type) {
    case GgufValueType::kUint8: case GgufValueType::kUint16: case GgufValueType::kUint32:
    case GgufValueType::kUint64: case GgufValueType::kBool:
      return uint_value;
    case GgufValueType::kInt8: case GgufValueType::kInt16: case GgufValueType::kInt32:
    case GgufValueType::kInt64:
      if (int_value < 0) return std::nullopt;
      return static_cast<uint64_t>(int_value);
    default:
      return std::nullopt;
  }
}

std::optional<double> GgufValue::AsFloat() const {
  if (type == GgufValueType::kFloat32 || type == GgufValueType::kFloat64) return float_value;
  if (type == GgufValueType::kInt8 || type == GgufValueType::kInt16 ||
      type == GgufValueType::kInt32 || type == GgufValueType::kInt64) {
    return static_cast<double>(int_value);
  }
  if (auto u = AsUint()) return static_cast<double>(*u);
  return std::nullopt;
}

std::optional<bool> GgufValue::AsBool() const {
  auto u = AsUint();
  if (!u || *u > 1) return std::nullopt;
  return *u == 1;
}

std::optional<std::vector<uint64_t>> GgufValue::AsUintArray() const {
  if (!is_array()) return std::nullopt;
  if (!ints.empty() || (array_size > 0 && uints.empty())) {
    if (ints.size() != array_size) return std::nullopt;
    std::vector<uint64_t> out;
    out.reserve(ints.size());
    for (int64_t v : ints) {
      if (v < 0) return std::nullopt;
      out.push_back(static_cast<uint64_t>(v));
    }
    return out;
  }
  return uints;
}

const GgufValue* GgufFile::Find(std::string_view key) const {
  auto it = key_index.find(std::string(key));
  return it == key_index.end() ? nullptr : &metadata[it->second].second;
}

std::optional<uint64_t> GgufFile::GetUint(std::string_view key) const {
  const GgufValue* v = Find(key);
  return v ? v->AsUint() : std::nullopt;
}

std::optional<std::string> GgufFile::GetString(std::string_view key) const {
  const GgufValue* v = Find(key);
  if (!v || v->type != GgufValueType::kString) return std::nullopt;
  return v->string_value;
}

std::optional<GgufSplitName> ParseGgufSplitName(std::string_view path) {
  // PREFIX-NNNNN-of-NNNNN.gguf
  constexpr std::string_view kSuffix = ".gguf";
  if (path.size() < 20 || !path.ends_with(kSuffix)) return std::nullopt;
  std::string_view stem = path.substr(0, path.size() - kSuffix.size());
  if (stem.size() < 16) return std::nullopt;
  std::string_view tail = stem.substr(stem.size() - 15);  // "-00001-of-00003"
  auto digits = [](std::string_view s) -> std::optional<uint32_t> {
    uint32_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + static_cast<uint32_t>(c - '0');
    }
    return v;
  };
  if (tail[0] != '-' || tail.substr(6, 4) != "-of-") return std::nullopt;
  auto index = digits(tail.substr(1, 5));
  auto count = digits(tail.substr(10, 5));
  if (!index || !count || *index == 0 || *count == 0 || *index > *count) return std::nullopt;
  return GgufSplitName{std::string(stem.substr(0, stem.size() - 15)), *index, *count};
}

std::string GgufSplitPath(std::string_view prefix, uint32_t index, uint32_t count) {
  return fmt::format("{}-{:05d}-of-{:05d}.gguf", prefix, index, count);
}

}  // namespace memfit
