#pragma once
// A small GGUF writer for tests and benchmarks: every version (1-3), either byte order, every
// metadata value type including nested arrays, tensor infos with computed offsets. Data is either
// written as zeros or left virtual (VirtualGgufSource), so model-sized files cost nothing.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "memfit/byte_source.h"
#include "memfit/gguf.h"

namespace memfit::testing {

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3, bool big_endian = false)
      : version_(version), big_endian_(big_endian) {}

  // Raw appenders in the file's byte order.
  template <typename T>
  void Put(std::string& out, T value) const {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    if (big_endian_) std::reverse(raw, raw + sizeof(T));
    out.append(raw, sizeof(T));
  }
  void PutCount(std::string& out, uint64_t n) const {
    if (version_ == 1) Put<uint32_t>(out, static_cast<uint32_t>(n));
    else Put<uint64_t>(out, n);
  }
  void PutString(std::string& out, const std::string& s) const {
    PutCount(out, s.size());
    out += s;
  }

  // A key/value whose value bytes are produced by `value` (after the u32 type).
  GgufWriter& Raw(const std::string& key, uint32_t type, const std::function<void(std::string&)>& value) {
    std::string kv;
    PutString(kv, key);
    Put<uint32_t>(kv, type);
    value(kv);
    kvs_.push_back(std::move(kv));
    return *this;
  }
  GgufWriter& U8(const std::string& k, uint8_t v) { return Raw(k, 0, [&](std::string& o) { Put(o, v); }); }
  GgufWriter& I8(const std::string& k, int8_t v) { return Raw(k, 1, [&](std::string& o) { Put(o, v); }); }
  GgufWriter& U16(const std::string& k, uint16_t v) { return Raw(k, 2, [&](std::string& o) { Put(o, v); }); }
  GgufWriter& I16(const std::string& k, int16_t v) { return Raw(k, 3, [&](std::string& o) { Put(o, v); }); }
  GgufWriter& U32(const std::string& k, uint32_t v) { return Raw(k, 4, [&](std::string& o) { Put(o, v); }); }
  GgufWriter& I32(const std::string& k, int32_t v) { return Raw(k, 5, [&](std::string& o) { Put(o, v); }); }
  GgufWriter& F32(const std::string& k, float v) { return Raw(k, 6, [&](std::string& o) { Put(o, v); }); }
  GgufWriter& Bool(const std::string& k, bool v) {
    return Raw(k, 7, [&](std::string& o) { Put<uint8_t>(o, v ? 1 : 0); });
  }
  GgufWriter& Str(const std::string& k, const std::string& v) {
    return Raw(k, 8, [&](std::string& o) { PutString(o, v); });
  }
  GgufWriter& U64(const std::string& k, uint64_t v) { return Raw(k, 10, [&](std::string& o) { Put(o, v); }); }
  GgufWriter& I64(const std::string& k, int64_t v) { return Raw(k, 11, [&](std::string& o) { Put(o, v); }); }
  GgufWriter& F64(const std::string& k, double v) { return Raw(k, 12, [&](std::string& o) { Put(o, v); }); }
  GgufWriter& U32Array(const std::string& k, const std::vector<uint32_t>& v) {
    return Raw(k, 9, [&](std::string& o) {
      Put<uint32_t>(o, 4);
      PutCount(o, v.size());
      for (uint32_t x : v) Put(o, x);
    });
  }
  GgufWriter& I32Array(const std::string& k, const std::vector<int32_t>& v) {
    return Raw(k, 9, [&](std::string& o) {
      Put<uint32_t>(o, 5);
      PutCount(o, v.size());
      for (int32_t x : v) Put(o, x);
    });
  }
  GgufWriter& BoolArray(const std::string& k, const std::vector<bool>& v) {
    return Raw(k, 9, [&](std::string& o) {
      Put<uint32_t>(o, 7);
      PutCount(o, v.size());
      for (bool x : v) Put<uint8_t>(o, x ? 1 : 0);
    });
  }
  GgufWriter& F32Array(const std::string& k, const std::vector<float>& v) {
    return Raw(k, 9, [&](std::string& o) {
      Put<uint32_t>(o, 6);
      PutCount(o, v.size());
      for (float x : v) Put(o, x);
    });
  }
  GgufWriter& StrArray(const std::string& k, const std::vector<std::string>& v) {
    return Raw(k, 9, [&](std::string& o) {
      Put<uint32_t>(o, 8);
      PutCount(o, v.size());
      for (const auto& x : v) PutString(o, x);
    });
  }

  // A tensor info; `dims` innermost first (ggml ne order). Offsets are assigned in order, each
  // aligned, unless `offset` is given.
  // A nested array of uint16 arrays, e.g. [[1, 2], [3]].
  GgufWriter& NestedU16Array(const std::string& k, const std::vector<std::vector<uint16_t>>& v) {
    return Raw(k, 9, [&](std::string& o) {
      Put<uint32_t>(o, 9);  // elements are arrays
      PutCount(o, v.size());
      for (const auto& inner : v) {
        Put<uint32_t>(o, 2);  // of uint16
        PutCount(o, inner.size());
        for (uint16_t x : inner) Put<uint16_t>(o, x);
      }
    });
  }
  GgufWriter& Tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t type,
                     std::optional<uint64_t> offset = std::nullopt) {
    tensors_.push_back({name, std::move(dims), type, offset});
    return *this;
  }
  void set_alignment_for_offsets(uint64_t a) { alignment_ = a; }

  // Bytes of the tensor data section (offsets computed as Build does).
  uint64_t DataBytes() const {
    uint64_t end = 0, next = 0;
    for (const auto& t : tensors_) {
      uint64_t off = t.offset ? *t.offset : next;
      uint64_t bytes = TensorBytes(t);
      end = std::max(end, off + bytes);
      next = Align(off + bytes);
    }
    return end;
  }

  // The header (magic .. tensor infos), plus alignment padding when there are tensors.
  std::string Header() const {
    std::string out = "GGUF";
    Put<uint32_t>(out, version_);
    PutCount(out, tensors_.size());
    PutCount(out, kvs_.size());
    for (const auto& kv : kvs_) out += kv;
    uint64_t next = 0;
    for (const auto& t : tensors_) {
      PutString(out, t.name);
      Put<uint32_t>(out, static_cast<uint32_t>(t.dims.size()));
      for (uint64_t d : t.dims) PutCount(out, d);
      Put<uint32_t>(out, t.type);
      uint64_t off = t.offset ? *t.offset : next;
      Put<uint64_t>(out, off);
      next = Align(off + TensorBytes(t));
    }
    if (!tensors_.empty()) out.append(Align(out.size()) - out.size(), '\0');
    return out;
  }
  // The whole file with zero data.
  std::string Build() const { return Header() + std::string(DataBytes(), '\0'); }

 private:
  struct T {
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t type;
    std::optional<uint64_t> offset;
  };
  uint64_t Align(uint64_t x) const { return x + (alignment_ - x % alignment_) % alignment_; }
  static uint64_t TensorBytes(const T& t) {
    const GgmlTypeInfo* info = FindGgmlType(t.type);
    if (!info) return 0;
    uint64_t n = 1;
    for (uint64_t d : t.dims) n *= d;
    return n / info->block_elements * info->block_bytes;
  }

  uint32_t version_;
  bool big_endian_;
  uint64_t alignment_ = 32;
  std::vector<std::string> kvs_;
  std::vector<T> tensors_;
};

// A header followed by `data_bytes` virtual zero bytes: model-sized files without the memory.
class VirtualGgufSource final : public ByteSource {
 public:
  VirtualGgufSource(std::string header, uint64_t data_bytes, std::string name = "virtual.gguf")
      : header_(std::move(header)), size_(header_.size() + data_bytes), name_(std::move(name)) {}
  Result<uint64_t> Size() override { return size_; }
  Result<std::string> Read(uint64_t offset, size_t length) override {
    if (offset > size_ || length > size_ - offset) return MakeError("{}: read past the end", name_);
    std::string out(length, '\0');
    if (offset < header_.size()) {
      size_t n = std::min<uint64_t>(length, header_.size() - offset);
      std::memcpy(out.data(), header_.data() + offset, n);
    }
    return out;
  }
  std::string Name() const override { return name_; }

 private:
  std::string header_;
  uint64_t size_;
  std::string name_;
};

}  // namespace memfit::testing
