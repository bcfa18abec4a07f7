// GGUF header reader.
//
// Byte layout (ggml-org/ggml docs/gguf.md; ggml src/gguf.cpp). All integers are in the file's byte
// order: little-endian, or big-endian in files written for big-endian hosts. There is no flag: a
// big-endian file is recognised because its version reads byte-swapped (0x03000000).
//   u8[4]  magic "GGUF"
//   u32    version: 1, 2 or 3 (v1 used u32 for every count and length below, v2+ u64)
//   u64    tensor_count            (u32 in v1)
//   u64    metadata_kv_count       (u32 in v1)
//   kv[]   key: string, value_type: u32, value
//            string = u64 length (u32 in v1) + UTF-8 bytes, no NUL
//            array  = u32 element type + u64 count (u32 in v1) + elements (arrays may nest)
//   info[] name: string (< 64 bytes), n_dims: u32 (<= 4), ne: u64[n_dims] (u32 in v1),
//          type: u32 ggml_type, offset: u64 (relative to the data section, multiple of alignment)
//   pad    zeros up to a multiple of general.alignment (default 32)
//   data   tensor data
// A file without tensors (vocab-only files) may end right after the last key/value.
//
// The header is read incrementally through a chunked cursor, so a multi-megabyte vocabulary never
// needs the whole file in memory, and every count or length is checked against the bytes left and
// a cap before anything is allocated.

#include <algorithm>
#include <bit>
#include <cstring>
#include <unordered_set>

#include "memfit/checked_math.h"
#include "memfit/gguf.h"

namespace memfit {
namespace {

constexpr uint32_t kMaxDims = 4;       // GGML_MAX_DIMS
constexpr uint64_t kMaxNameBytes = 63;  // GGML_MAX_NAME (64) including the NUL
// Counts in the header are checked against the bytes left in the file, but the file may be far
// larger than the header (a 100 GB model, a sparse file, a Hub Content-Range): space is reserved
// for at most this many entries up front, and containers grow with the entries actually read, so
// memory stays a fixed multiple of the bytes read.
constexpr uint64_t kMaxReserve = 4096;

uint64_t ReserveFor(uint64_t n) { return std::min(n, kMaxReserve); }

class Cursor {
 public:
  Cursor(ByteSource& source, uint64_t size, size_t chunk) : source_(source), size_(size), chunk_(chunk) {}

  uint64_t position() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }
  void set_big_endian(bool big) { big_endian_ = big; }

  // Raw bytes into `out`.
  Status ReadBytes(char* out, uint64_t length, std::string_view what) {
    if (length > left()) {
      return MakeError("{} at offset {} needs {} bytes, only {} left", what, pos_, length, left());
    }
    while (length > 0) {
      if (pos_ < buf_start_ || pos_ >= buf_start_ + buf_.size()) {
        MEMFIT_RETURN_IF_ERROR(Fill());
      }
      uint64_t in_buf = buf_start_ + buf_.size() - pos_;
      uint64_t n = std::min(in_buf, length);
      std::memcpy(out, buf_.data() + (pos_ - buf_start_), n);
      out += n;
      pos_ += n;
      length -= n;
    }
    return Ok{};
  }

  template <typename T>
  Result<T> Read(std::string_view what) {
    unsigned char raw[sizeof(T)];
    MEMFIT_RETURN_IF_ERROR(ReadBytes(reinterpret_cast<char*>(raw), sizeof(T), what));
    if (big_endian_) std::reverse(raw, raw + sizeof(T));
    T value;
    std::memcpy(&value, raw, sizeof(T));
    return value;
  }

 private:
  Status Fill() {
    uint64_t n = std::min<uint64_t>(chunk_, left());
    auto bytes = source_.Read(pos_, static_cast<size_t>(n));
    if (!bytes) return bytes.error();
    buf_ = std::move(*bytes);
    buf_start_ = pos_;
    return Ok{};
  }

  ByteSource& source_;
  uint64_t size_;
  size_t chunk_;
  uint64_t pos_ = 0;
  bool big_endian_ = false;
  std::string buf_;
  uint64_t buf_start_ = 0;
};

class Parser {
 public:
  Parser(Cursor& cur, const GgufLimits& limits, uint32_t version)
      : cur_(cur), limits_(limits), v1_(version == 1) {}

  // A count or length: u32 in v1, u64 after.
  Result<uint64_t> ReadCount(std::string_view what) {
    if (v1_) {
      MEMFIT_ASSIGN_OR_RETURN(uint32_t n, cur_.Read<uint32_t>(what));
      return n;
    }
    return cur_.Read<uint64_t>(what);
  }

  Result<std::string> ReadString(std::string_view what, uint64_t cap) {
    MEMFIT_ASSIGN_OR_RETURN(uint64_t n, ReadCount(what));
    if (n > cap) return MakeError("{}: length {} exceeds the limit of {} bytes", what, n, cap);
    if (n > cur_.left()) {
      return MakeError("{}: length {} exceeds the {} bytes left in the file", what, n, cur_.left());
    }
    std::string s(n, '\0');
    MEMFIT_RETURN_IF_ERROR(cur_.ReadBytes(s.data(), n, what));
    return s;
  }

  Status ReadValue(GgufValueType type, GgufValue& out, const std::string& key, uint32_t depth) {
    out.type = type;
    switch (type) {
      case GgufValueType::kUint8: return ReadU<uint8_t>(out.uint_value, key);
      case GgufValueType::kUint16: return ReadU<uint16_t>(out.uint_value, key);
      case GgufValueType::kUint32: return ReadU<uint32_t>(out.uint_value, key);
      case GgufValueType::kUint64: return ReadU<uint64_t>(out.uint_value, key);
      case GgufValueType::kInt8: return ReadI<int8_t>(out.int_value, key);
      case GgufValueType::kInt16: return ReadI<int16_t>(out.int_value, key);
      case GgufValueType::kInt32: return ReadI<int32_t>(out.int_value, key);
      case GgufValueType::kInt64: return ReadI<int64_t>(out.int_value, key);
      case GgufValueType::kFloat32: {
        MEMFIT_ASSIGN_OR_RETURN(float f, cur_.Read<float>(key));  // NOLINT
        out.float_value = f;
        return Ok{};
      }
      case GgufValueType::kFloat64: {
        MEMFIT_ASSIGN_OR_RETURN(out.float_value, cur_.Read<double>(key));
        return Ok{};
      }
      case GgufValueType::kBool: {
        MEMFIT_ASSIGN_OR_RETURN(uint8_t b, cur_.Read<uint8_t>(key));
        if (b > 1) return MakeError("key \"{}\": bool value {} is not 0 or 1", key, b);
        out.uint_value = b;
        return Ok{};
      }
      case GgufValueType::kString: {
        MEMFIT_ASSIGN_OR_RETURN(out.string_value,
                                ReadString(fmt::format("key \"{}\": string", key), limits_.max_string_bytes));
        return Ok{};
      }
      case GgufValueType::kArray: return ReadArray(out, key, depth);
    }
    return MakeError("key \"{}\": unknown value type {}", key, static_cast<uint32_t>(type));
  }

 private:
  template <typename T>
  Status ReadU(uint64_t& out, const std::string& key) {
    MEMFIT_ASSIGN_OR_RETURN(T v, cur_.Read<T>(key));
    out = v;
    return Ok{};
  }
  template <typename T>
  Status ReadI(int64_t& out, const std::string& key) {
    MEMFIT_ASSIGN_OR_RETURN(T v, cur_.Read<T>(key));
    out = v;
    return Ok{};
  }

  static uint64_t MinElementBytes(GgufValueType t, bool v1) {
    switch (t) {
      case GgufValueType::kUint8: case GgufValueType::kInt8: case GgufValueType::kBool: return 1;
      case GgufValueType::kUint16: case GgufValueType::kInt16: return 2;
      case GgufValueType::kUint32: case GgufValueType::kInt32: case GgufValueType::kFloat32: return 4;
      case GgufValueType::kUint64: case GgufValueType::kInt64: case GgufValueType::kFloat64: return 8;
      case GgufValueType::kString: return v1 ? 4 : 8;
      case GgufValueType::kArray: return v1 ? 8 : 12;
    }
    return 1;
  }

  Status ReadArray(GgufValue& out, const std::string& key, uint32_t depth) {
    if (depth >= limits_.max_array_depth) {
      return MakeError("key \"{}\": arrays nested deeper than {}", key, limits_.max_array_depth);
    }
    MEMFIT_ASSIGN_OR_RETURN(uint32_t raw_type, cur_.Read<uint32_t>(fmt::format("key \"{}\": array type", key)));
    if (raw_type > static_cast<uint32_t>(GgufValueType::kFloat64)) {
      return MakeError("key \"{}\": unknown array element type {}", key, raw_type);
    }
    auto elem = static_cast<GgufValueType>(raw_type);
    MEMFIT_ASSIGN_OR_RETURN(uint64_t n, ReadCount(fmt::format("key \"{}\": array length", key)));
    if (n > limits_.max_array_elements) {
      return MakeError("key \"{}\": array of {} elements exceeds the limit of {}", key, n,
                       limits_.max_array_elements);
    }
    uint64_t min_bytes = MinElementBytes(elem, v1_);
    if (n > cur_.left() / min_bytes) {
      return MakeError("key \"{}\": array of {} {} elements cannot fit in the {} bytes left", key, n,
                       GgufValueTypeName(elem), cur_.left());
    }
    out.array_type = elem;
    out.array_size = n;
    GgufValue item;
    switch (elem) {
      case GgufValueType::kString: out.strings.reserve(ReserveFor(n)); break;
      case GgufValueType::kFloat32: case GgufValueType::kFloat64: out.floats.reserve(ReserveFor(n)); break;
      case GgufValueType::kInt8: case GgufValueType::kInt16: case GgufValueType::kInt32:
      case GgufValueType::kInt64: out.ints.reserve(ReserveFor(n)); break;
      case GgufValueType::kArray: out.nested.reserve(ReserveFor(n)); break;
      default: out.uints.reserve(ReserveFor(n)); break;
    }
    for (uint64_t i = 0; i < n; ++i) {
      if (elem == GgufValueType::kArray) {
        GgufValue nested;
        MEMFIT_RETURN_IF_ERROR(ReadValue(elem, nested, key, depth + 1));
        out.nested.push_back(std::move(nested));
        continue;
      }
      if (elem == GgufValueType::kString) {
        auto s = ReadString(key, limits_.max_string_bytes);
        if (!s) return MakeError("key \"{}\"[{}]: {}", key, i, s.error().message);
        out.strings.push_back(std::move(*s));
        continue;
      }
      MEMFIT_RETURN_IF_ERROR(ReadValue(elem, item, key, depth + 1));
      switch (elem) {
        case GgufValueType::kFloat32: case GgufValueType::kFloat64: out.floats.push_back(item.float_value); break;
        case GgufValueType::kInt8: case GgufValueType::kInt16: case GgufValueType::kInt32:
        case GgufValueType::kInt64: out.ints.push_back(item.int_value); break;
        default: out.uints.push_back(item.uint_value); break;
      }
    }
    return Ok{};
  }

  Cursor& cur_;
  const GgufLimits& limits_;
  bool v1_;
};

Result<GgufFile> ReadImpl(ByteSource& source, const GgufLimits& limits) {
  GgufFile file;
  MEMFIT_ASSIGN_OR_RETURN(file.file_bytes, source.Size());
  Cursor cur(source, file.file_bytes, std::max<size_t>(limits.chunk_bytes, 64));
  char magic[4];
  if (file.file_bytes < 8) return MakeError("file of {} bytes is too short for a GGUF header", file.file_bytes);
  MEMFIT_RETURN_IF_ERROR(cur.ReadBytes(magic, 4, "magic"));
  if (std::memcmp(magic, "GGUF", 4) != 0) return MakeError("not a GGUF file (magic is not \"GGUF\")");
  MEMFIT_ASSIGN_OR_RETURN(uint32_t version, cur.Read<uint32_t>("version"));
  if (version == 0 || version > 0xffff) {
    // A big-endian file: the version reads byte-swapped (0x03000000).
    uint32_t swapped = __builtin_bswap32(version);
    if (swapped >= 1 && swapped <= 3) {
      file.big_endian = true;
      version = swapped;
      cur.set_big_endian(true);
    }
  }
  if (version < 1 || version > 3) return MakeError("unsupported GGUF version {}", version);
  file.version = version;
  Parser parser(cur, limits, version);
  MEMFIT_ASSIGN_OR_RETURN(uint64_t n_tensors, parser.ReadCount("tensor_count"));
  MEMFIT_ASSIGN_OR_RETURN(uint64_t n_kv, parser.ReadCount("metadata_kv_count"));
  if (n_tensors > limits.max_tensors) {
    return MakeError("tensor_count {} exceeds the limit of {}", n_tensors, limits.max_tensors);
  }
  if (n_kv > limits.max_kv) return MakeError("metadata_kv_count {} exceeds the limit of {}", n_kv, limits.max_kv);
  // Smallest key/value: empty key + type + one byte; smallest tensor info: empty name + n_dims +
  // type + offset.
  const uint64_t len_bytes = version == 1 ? 4 : 8;
  if (n_kv > cur.left() / (len_bytes + 5)) {
    return MakeError("metadata_kv_count {} cannot fit in the {} bytes left", n_kv, cur.left());
  }
  if (n_tensors > cur.left() / (len_bytes + 16)) {
    return MakeError("tensor_count {} cannot fit in the {} bytes left", n_tensors, cur.left());
  }

  file.metadata.reserve(ReserveFor(n_kv));
  file.key_index.reserve(ReserveFor(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    MEMFIT_ASSIGN_OR_RETURN(std::string key,
                            parser.ReadString(fmt::format("key #{}", i), limits.max_key_bytes));
    if (file.key_index.count(key)) return MakeError("duplicate key \"{}\"", key);
    MEMFIT_ASSIGN_OR_RETURN(uint32_t raw_type, cur.Read<uint32_t>(fmt::format("key \"{}\": type", key)));
    if (raw_type > static_cast<uint32_t>(GgufValueType::kFloat64)) {
      return MakeError("key \"{}\": unknown value type {}", key, raw_type);
    }
    GgufValue value;
    MEMFIT_RETURN_IF_ERROR(parser.ReadValue(static_cast<GgufValueType>(raw_type), value, key, 0));
    file.key_index.emplace(key, file.metadata.size());
    file.metadata.emplace_back(std::move(key), std::move(value));
    if (cur.position() > limits.max_header_bytes) {
      return MakeError("header exceeds the limit of {} bytes", limits.max_header_bytes);
    }
  }

  if (const GgufValue* a = file.Find("general.alignment")) {
    if (a->type != GgufValueType::kUint32) {
      return MakeError("general.alignment must be a uint32, got {}", GgufValueTypeName(a->type));
    }
    if (a->uint_value == 0 || !std::has_single_bit(a->uint_value)) {
      return MakeError("general.alignment {} is not a power of two", a->uint_value);
    }
    file.alignment = a->uint_value;
  }

  file.tensors.reserve(ReserveFor(n_tensors));
  std::unordered_set<std::string> names;
  names.reserve(ReserveFor(n_tensors));
  ByteSum total;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    MEMFIT_ASSIGN_OR_RETURN(t.name, parser.ReadString(fmt::format("tensor #{} name", i), kMaxNameBytes));
    if (!names.insert(t.name).second) return MakeError("duplicate tensor \"{}\"", t.name);
    const std::string where = fmt::format("tensor \"{}\"", t.name);
    MEMFIT_ASSIGN_OR_RETURN(uint32_t n_dims, cur.Read<uint32_t>(where + ": n_dims"));
    if (n_dims > kMaxDims) return MakeError("{}: {} dimensions (at most {})", where, n_dims, kMaxDims);
    t.elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      MEMFIT_ASSIGN_OR_RETURN(uint64_t ne, parser.ReadCount(where + ": dimension"));
      if (ne > static_cast<uint64_t>(INT64_MAX)) return MakeError("{}: dimension {} is negative", where, d);
      auto next = CheckedMul(t.elements, ne);
      if (!next || *next > static_cast<uint64_t>(INT64_MAX)) {
        return MakeError("{}: element count overflows", where);
      }
      t.elements = *next;
      t.dims.push_back(ne);
    }
    MEMFIT_ASSIGN_OR_RETURN(uint32_t type_id, cur.Read<uint32_t>(where + ": type"));
    t.type = FindGgmlType(type_id);
    if (!t.type) return MakeError("{}: unknown ggml type id {}", where, type_id);
    MEMFIT_ASSIGN_OR_RETURN(t.offset, cur.Read<uint64_t>(where + ": offset"));
    uint64_t ne0 = t.dims.empty() ? 1 : t.dims[0];
    if (ne0 % t.type->block_elements != 0) {
      return MakeError("{}: ne0 {} is not a multiple of the {} block size {}", where, ne0, t.type->name,
                       t.type->block_elements);
    }
    auto bytes = GgmlRowBytes(*t.type, t.elements);  // whole rows: elements is a multiple of ne0
    if (!bytes) return Wrap(bytes.error(), where);
    t.bytes = *bytes;
    if (t.offset % file.alignment != 0) {
      return MakeError("{}: offset {} is not a multiple of the alignment {}", where, t.offset, file.alignment);
    }
    total.Add(t.bytes);
    file.tensors.push_back(std::move(t));
  }
  if (total.overflowed()) return MakeError("total tensor bytes overflow 64 bits");
  file.tensor_bytes = total.total();
  file.header_bytes = cur.position();
  if (file.tensors.empty()) {
    file.data_offset = file.header_bytes;  // vocab-only files end here, without padding
    return file;
  }
  uint64_t pad = (file.alignment - file.header_bytes % file.alignment) % file.alignment;
  file.data_offset = file.header_bytes + pad;
  if (file.data_offset > file.file_bytes) {
    return MakeError("data section starts at {} past the end of the file ({} bytes)", file.data_offset,
                     file.file_bytes);
  }
  const uint64_t data_bytes = file.file_bytes - file.data_offset;
  // Tensors must lie inside the data section and must not overlap.
  std::vector<std::pair<uint64_t, const GgufTensorInfo*>> by_offset;
  by_offset.reserve(file.tensors.size());
  for (const auto& t : file.tensors) {
    if (t.offset > data_bytes || t.bytes > data_bytes - t.offset) {
      return MakeError("tensor \"{}\": data [{}, +{}) lies past the end of the data section ({} bytes)",
                       t.name, t.offset, t.bytes, data_bytes);
    }
    by_offset.emplace_back(t.offset, &t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const auto* prev = by_offset[i - 1].second;
    if (prev->bytes > 0 && prev->offset + prev->bytes > by_offset[i].first) {
      return MakeError("tensor \"{}\" overlaps tensor \"{}\"", by_offset[i].second->name, prev->name);
    }
  }
  return file;
}

}  // namespace

Result<GgufFile> ReadGgufHeader(ByteSource& source, const GgufLimits& limits) {
  auto file = ReadImpl(source, limits);
  if (!file) return Wrap(file.error(), "gguf: " + source.Name());
  return file;
}

}  // namespace memfit
