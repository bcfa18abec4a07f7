#pragma once
// GGUF (llama.cpp / ggml model files): header, metadata key/values and tensor infos.
// Reference: ggml-org/ggml docs/gguf.md and src/gguf.cpp; type sizes from src/ggml-common.h.
// The byte layout is described at the top of src/formats/gguf_reader.cc; the checks memfit performs
// are listed in docs/formats.md ("GGUF").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memfit/byte_source.h"
#include "memfit/result.h"

namespace memfit {

// ---- ggml tensor types ----------------------------------------------------------------------

// One row of ggml's type_traits table: `block_elements` elements are stored in `block_bytes`.
struct GgmlTypeInfo {
  uint32_t id = 0;
  std::string_view name;      // "F32", "Q4_K", "MXFP4", ... as ggml_type_name spells it
  uint32_t block_elements = 0;
  uint32_t block_bytes = 0;
  bool quantized = false;     // ggml_is_quantized: block types (not F32/F16/BF16/I*/F64)
  bool removed = false;       // ids kept only for old files (Q4_0_4_4, IQ4_NL_4_4, ...)
};

// The type with this id, or nullptr for an id ggml does not define (4, 5, or >= 43).
const GgmlTypeInfo* FindGgmlType(uint32_t id);
// By name, case-insensitive ("q8_0", "F16"); nullptr when unknown.
const GgmlTypeInfo* FindGgmlTypeByName(std::string_view name);
// The whole table, in id order (for docs and tests).
const std::vector<GgmlTypeInfo>& GgmlTypes();
// ggml_row_size: bytes of `elements` elements; error when `elements` is not a whole number of
// blocks or on overflow.
Result<uint64_t> GgmlRowBytes(const GgmlTypeInfo& type, uint64_t elements);

// ---- metadata values ------------------------------------------------------------------------

enum class GgufValueType : uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5, kFloat32 = 6,
  kBool = 7, kString = 8, kArray = 9, kUint64 = 10, kInt64 = 11, kFloat64 = 12,
};
std::string_view GgufValueTypeName(GgufValueType type);

// A metadata value. Scalars use one field by type; arrays keep their elements in the typed vector
// matching `array_type` (integers and bools in `ints`/`uints`, floats in `floats`, strings in
// `strings`, nested arrays in `nested`).
struct GgufValue {
  GgufValueType type = GgufValueType::kUint8;
  uint64_t uint_value = 0;     // kUint*, kBool
  int64_t int_value = 0;       // kInt*
  double float_value = 0;      // kFloat32, kFloat64
  std::string string_value;    // kString
  // kArray:
  GgufValueType array_type = GgufValueType::kUint8;
  uint64_t array_size = 0;
  std::vector<uint64_t> uints;  // unsigned integer and bool elements
  std::vector<int64_t> ints;    // signed integer elements
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::vector<GgufValue> nested;

  bool is_array() const { return type == GgufValueType::kArray; }
  // A non-negative integer (any width, bool as 0/1); nullopt for other types or negatives.
  std::optional<uint64_t> AsUint() const;
  std::optional<double> AsFloat() const;  // integers and floats
  std::optional<bool> AsBool() const;     // bool, or an integer 0/1
  // Each element of an integer/bool array as AsUint; nullopt for other types or negatives.
  std::optional<std::vector<uint64_t>> AsUintArray() const;
};

// ---- the file -------------------------------------------------------------------------------

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ne[0..n_dims): ne0 is innermost (contiguous), as ggml stores it
  const GgmlTypeInfo* type = nullptr;
  uint64_t offset = 0;         // relative to the data section of its file
  uint64_t elements = 0;
  uint64_t bytes = 0;          // exact: ne0/block * block_bytes * ne1 * ne2 * ne3
};

struct GgufFile {
  uint32_t version = 0;
  bool big_endian = false;
  uint64_t alignment = 32;                // general.alignment, else 32
  std::vector<std::pair<std::string, GgufValue>> metadata;  // in file order
  std::vector<GgufTensorInfo> tensors;    // in file order
  uint64_t file_bytes = 0;                // size of the source
  uint64_t header_bytes = 0;              // end of the tensor infos
  uint64_t data_offset = 0;               // start of tensor data (== header_bytes if no tensors)
  uint64_t tensor_bytes = 0;              // sum of tensor sizes

  const GgufValue* Find(std::string_view key) const;
  std::optional<uint64_t> GetUint(std::string_view key) const;
  std::optional<std::string> GetString(std::string_view key) const;

  std::unordered_map<std::string, size_t> key_index;  // key -> position in metadata
};

struct GgufLimits {
  uint64_t max_kv = 1 << 20;
  uint64_t max_tensors = 1 << 22;
  uint64_t max_string_bytes = 64ull << 20;    // one string (chat templates are KBs)
  uint64_t max_key_bytes = 65535;             // gguf.md: keys are at most 65535 bytes
  uint64_t max_array_elements = 1ull << 28;   // per array (vocabularies are ~10^5..10^6)
  uint32_t max_array_depth = 8;               // nested arrays
  uint64_t max_header_bytes = 4ull << 30;     // metadata + tensor infos
  size_t chunk_bytes = 1 << 20;               // ByteSource read size
};

// Reads and validates a GGUF header (version 1, 2 or 3, either byte order) incrementally through
// the ByteSource, never holding more than one chunk of raw bytes.
Result<GgufFile> ReadGgufHeader(ByteSource& source, const GgufLimits& limits = {});

// ---- split files (gguf-split) ---------------------------------------------------------------

struct GgufSplitName {
  std::string prefix;  // "/models/x" of "/models/x-00001-of-00003.gguf"
  uint32_t index = 0;  // 1-based
  uint32_t count = 0;
};
// Parses "PREFIX-%05d-of-%05d.gguf" (llama_split_prefix); nullopt for other names.
std::optional<GgufSplitName> ParseGgufSplitName(std::string_view path);
// llama_split_path: PREFIX-%05d-of-%05d.gguf with a 1-based index.
std::string GgufSplitPath(std::string_view prefix, uint32_t index, uint32_t count);

}  // namespace memfit
