// Binary cache formats. Integers are little-endian; "str" is a u32 length and the bytes.
//
// Header, magic "MFSTHDR2":
//   u64 header_bytes, u64 data_bytes
//   u32 metadata count, then (str key, str value) in key order
//   u32 dtype count (at most 64), then str dtype name (safetensors spelling) each
//   u64 tensor count, then per tensor in file order:
//     str name, u8 dtype (an index into the dtype names), u32 rank, u64 dims[rank],
//     u64 begin, u64 end
// Index, magic "MFWIDX02":
//   u8 has_total (0 or 1), u64 total_size
//   u32 shard count, then str shard name each, strictly increasing
//   u64 entry count, then (str tensor, u32 shard) each, tensors strictly increasing; every
//   shard is named by some entry (so decoding gives what ParseWeightIndex gave)
// The shard table makes an entry a name and a number, as WeightMap holds it: decoding appends the
// names to one buffer and checks the order.

#include "hub/net/cache_codec.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace memfit::hubnet {
namespace {

constexpr std::string_view kHeaderMagic = "MFSTHDR2";
constexpr std::string_view kIndexMagic = "MFWIDX02";
constexpr uint32_t kMaxDtypes = 64;

void PutU8(std::string& out, uint8_t v) { out += static_cast<char>(v); }
void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
bool PutStr(std::string& out, std::string_view s) {
  if (s.size() > std::numeric_limits<uint32_t>::max()) return false;
  PutU32(out, static_cast<uint32_t>(s.size()));
  out += s;
  return true;
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}
  size_t left() const { return static_cast<size_t>(end_ - p_); }
  bool U8(uint8_t& v) {
    if (left() < 1) return false;
    v = static_cast<uint8_t>(*p_++);
    return true;
  }
  bool U32(uint32_t& v) { return Little(v); }
  bool U64(uint64_t& v) { return Little(v); }
  // A view into the bytes: valid while they are.
  bool Str(std::string_view& s) {
    uint32_t n = 0;
    if (!U32(n) || n > left()) return false;
    s = std::string_view(p_, n);
    p_ += n;
    return true;
  }

 private:
  template <typename T>
  bool Little(T& v) {
    if (left() < sizeof(T)) return false;
    v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= T{static_cast<unsigned char>(p_[i])} << (8 * i);
    p_ += sizeof(T);
    return true;
  }
  const char* p_;
  const char* end_;
};

}  // namespace

std::string SerializeHeader(const SafetensorsHeader& header) {
  std::string out(kHeaderMagic);
  PutU64(out, header.header_bytes);
  PutU64(out, header.data_bytes);
  PutU32(out, static_cast<uint32_t>(header.metadata.size()));
  for (const auto& [k, v] : header.metadata) {
    if (!PutStr(out, k) || !PutStr(out, v)) return "";
  }
  std::vector<Dtype> dtypes;
  std::vector<uint8_t> index_of(256, 0xff);
  for (const auto& t : header.tensors) {
    auto& slot = index_of[static_cast<uint8_t>(t.dtype)];
    if (slot == 0xff) {
      slot = static_cast<uint8_t>(dtypes.size());
      dtypes.push_back(t.dtype);
    }
  }
  if (dtypes.size() > kMaxDtypes) return "";
  PutU32(out, static_cast<uint32_t>(dtypes.size()));
  for (Dtype d : dtypes) PutStr(out, DtypeName(d));
  PutU64(out, header.tensors.size());
  for (const auto& t : header.tensors) {
    if (!PutStr(out, t.name) || t.shape.size() > std::numeric_limits<uint32_t>::max()) return "";
    PutU8(out, index_of[static_cast<uint8_t>(t.dtype)]);
    PutU32(out, static_cast<uint32_t>(t.shape.size()));
    for (uint64_t d : t.shape) PutU64(out, d);
    PutU64(out, t.begin);
    PutU64(out, t.end);
  }
  return out;
}

std::optional<SafetensorsHeader> DeserializeHeader(std::string_view bytes) {
  if (!bytes.starts_with(kHeaderMagic)) return std::nullopt;
  Reader r(bytes.substr(kHeaderMagic.size()));
  SafetensorsHeader h;
  uint32_t count = 0;
  if (!r.U64(h.header_bytes) || !r.U64(h.data_bytes) || !r.U32(count) || count > r.left() / 8) {
    return std::nullopt;
  }
  std::string_view previous_key;
  for (uint32_t i = 0; i < count; ++i) {
    std::string_view k, v;
    if (!r.Str(k) || !r.Str(v) || (i > 0 && !(previous_key < k))) return std::nullopt;
    h.metadata.emplace_hint(h.metadata.end(), std::string(k), std::string(v));
    previous_key = k;
  }
  uint32_t dtype_count = 0;
  if (!r.U32(dtype_count) || dtype_count > kMaxDtypes) return std::nullopt;
  Dtype dtypes[kMaxDtypes];
  for (uint32_t i = 0; i < dtype_count; ++i) {
    std::string_view name;
    if (!r.Str(name)) return std::nullopt;
    auto dtype = ParseSafetensorsDtype(name);
    if (!dtype) return std::nullopt;
    dtypes[i] = *dtype;
  }
  uint64_t tensors = 0;
  // A tensor takes at least 4 + 1 + 4 + 16 bytes.
  if (!r.U64(tensors) || tensors > r.left() / 25) return std::nullopt;
  h.tensors.resize(static_cast<size_t>(tensors));
  for (auto& t : h.tensors) {
    std::string_view name;
    uint8_t dtype = 0;
    uint32_t rank = 0;
    if (!r.Str(name) || !r.U8(dtype) || dtype >= dtype_count || !r.U32(rank) ||
        rank > r.left() / 8) {
      return std::nullopt;
    }
    t.name.assign(name);
    t.dtype = dtypes[dtype];
    t.shape.resize(rank);
    for (auto& d : t.shape) r.U64(d);  // bounded by the check above
    if (!r.U64(t.begin) || !r.U64(t.end) || t.end < t.begin) return std::nullopt;
  }
  if (r.left() != 0) return std::nullopt;
  return h;
}

std::string SerializeIndex(const WeightIndex& index) {
  const WeightMap& map = index.weight_map;
  std::string out(kIndexMagic);
  PutU8(out, index.total_size ? 1 : 0);
  PutU64(out, index.total_size.value_or(0));
  PutU32(out, static_cast<uint32_t>(map.shard_names().size()));
  for (const auto& s : map.shard_names()) {
    if (!PutStr(out, s)) return "";
  }
  PutU64(out, map.size());
  for (size_t i = 0; i < map.size(); ++i) {
    if (!PutStr(out, map.tensor(i))) return "";
    PutU32(out, map.shard(i));
  }
  return out;
}

std::optional<WeightIndex> DeserializeIndex(std::string_view bytes) {
  if (!bytes.starts_with(kIndexMagic)) return std::nullopt;
  Reader r(bytes.substr(kIndexMagic.size()));
  uint8_t has_total = 0;
  uint64_t total = 0;
  uint32_t shard_count = 0;
  if (!r.U8(has_total) || has_total > 1 || !r.U64(total) || !r.U32(shard_count) ||
      shard_count > r.left() / 4) {
    return std::nullopt;
  }
  WeightIndex index;
  if (has_total) index.total_size = total;
  std::vector<std::string> shards;
  shards.reserve(shard_count);
  for (uint32_t i = 0; i < shard_count; ++i) {
    std::string_view s;
    if (!r.Str(s)) return std::nullopt;
    shards.emplace_back(s);
  }
  uint64_t count = 0;
  if (!r.U64(count) || count > r.left() / 8) return std::nullopt;
  std::vector<WeightMap::Entry> entries(static_cast<size_t>(count));
  std::string names;
  names.reserve(r.left());
  for (auto& e : entries) {
    std::string_view tensor;
    if (!r.Str(tensor) || !r.U32(e.shard)) return std::nullopt;
    e.name_offset = names.size();
    e.name_bytes = static_cast<uint32_t>(tensor.size());
    names += tensor;
  }
  if (r.left() != 0) return std::nullopt;
  // WeightMap::Make checks the order, the shard numbers and that every shard is named.
  auto map = WeightMap::Make(std::move(shards), std::move(names), std::move(entries));
  if (!map) return std::nullopt;
  index.weight_map = std::move(*map);
  return index;
}

}  // namespace memfit::hubnet
