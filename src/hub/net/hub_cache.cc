// HF cache and memfit cache reads and writes (layout in hub_cache.h, docs/hub.md).

#include "hub/net/hub_cache.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "memfit/byte_source.h"
#include "memfit/json.h"

namespace memfit::hubnet {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kMaxTreeBytes = 64ull << 20;
constexpr uint64_t kMaxHeaderCacheBytes = 512ull << 20;

std::optional<std::string> ReadWhole(const fs::path& path, uint64_t max_bytes) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;  // follows symlinks
  auto source = OpenFileByteSource(path.string());
  auto size = source->Size();
  if (!size || *size > max_bytes) return std::nullopt;
  auto bytes = source->Read(0, static_cast<size_t>(*size));
  if (!bytes) return std::nullopt;
  return std::move(bytes).value();
}

// Writes via a temporary file and rename, so readers never see half a file.
bool WriteAtomically(const fs::path& path, std::string_view bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return false;
  thread_local std::mt19937_64 rng{std::random_device{}()};
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rng());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutString(std::string& out, std::string_view s) {
  PutU64(out, s.size());
  out += s;
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool U64(uint64_t& v) {
    if (bytes_.size() - pos_ < 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<unsigned char>(bytes_[pos_ + i])} << (8 * i);
    pos_ += 8;
    return true;
  }
  bool String(std::string& s) {
    uint64_t n = 0;
    if (!U64(n) || n > bytes_.size() - pos_) return false;
    s.assign(bytes_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  size_t left() const { return bytes_.size() - pos_; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

constexpr std::string_view kHeaderMagic = "MFSTHDR1";
constexpr std::string_view kIndexMagic = "MFWIDX01";
constexpr std::string_view kGgufMagic = "MFGGUF01";
constexpr uint64_t kMaxGgufPrefixBytes = 1ull << 30;

}  // namespace

std::string RepoFolderName(std::string_view repo_id) {
  std::string out = "models--";
  for (char c : repo_id) out += (c == '/') ? std::string("--") : std::string(1, c);
  return out;
}

std::optional<std::string> HubCache::ReadRef(std::string_view repo_id,
                                             std::string_view revision) const {
  if (!hf_.empty()) {
    auto text = ReadWhole(fs::path(hf_) / RepoFolderName(repo_id) / "refs" / std::string(revision), 256);
    if (text) {
      while (!text->empty() && std::isspace(static_cast<unsigned char>(text->back()))) text->pop_back();
      if (IsObjectId(*text) && text->size() == 40) return text;
    }
  }
  if (revision.size() == 40 && IsObjectId(revision)) return std::string(revision);
  return std::nullopt;
}

void HubCache::WriteRef(std::string_view repo_id, std::string_view revision,
                        std::string_view commit) const {
  if (hf_.empty() || revision == commit) return;
  WriteAtomically(fs::path(hf_) / RepoFolderName(repo_id) / "refs" / std::string(revision), commit);
}

std::optional<std::string> HubCache::ReadSnapshotFile(std::string_view repo_id,
                                                      std::string_view commit,
                                                      std::string_view path,
                                                      uint64_t max_bytes) const {
  if (hf_.empty()) return std::nullopt;
  return ReadWhole(fs::path(hf_) / RepoFolderName(repo_id) / "snapshots" / std::string(commit) /
                       std::string(path),
                   max_bytes);
}

std::optional<std::string> HubCache::FullSnapshotFile(std::string_view repo_id,
                                                      std::string_view commit,
                                                      std::string_view path, uint64_t size) const {
  if (hf_.empty()) return std::nullopt;
  fs::path p = fs::path(hf_) / RepoFolderName(repo_id) / "snapshots" / std::string(commit) /
               std::string(path);
  std::error_code ec;
  if (!fs::is_regular_file(p, ec) || fs::file_size(p, ec) != size || ec) return std::nullopt;
  return p.string();
}

void HubCache::WriteSnapshotFile(std::string_view repo_id, std::string_view commit,
                                 const RepoFile& file, std::string_view bytes) const {
  if (hf_.empty() || !IsObjectId(file.etag)) return;
  const fs::path repo = fs::path(hf_) / RepoFolderName(repo_id);
  const fs::path blob = repo / "blobs" / file.etag;
  std::error_code ec;
  if (!fs::is_regular_file(blob, ec) && !WriteAtomically(blob, bytes)) return;
  const fs::path link = repo / "snapshots" / std::string(commit) / file.path;
  fs::create_directories(link.parent_path(), ec);
  if (fs::exists(fs::symlink_status(link, ec))) return;
  // ../../blobs/{etag}, one more ".." per folder in the file's path.
  fs::path target = fs::path("..") / "..";
  for (char c : file.path) {
    if (c == '/') target /= "..";
  }
  target = target / "blobs" / file.etag;
  fs::create_symlink(target, link, ec);
  if (ec) WriteAtomically(link, bytes);
}

std::optional<std::vector<RepoFile>> HubCache::ReadTree(std::string_view repo_id,
                                                        std::string_view commit) const {
  if (memfit_.empty()) return std::nullopt;
  auto text = ReadWhole(fs::path(memfit_) / "hub" / RepoFolderName(repo_id) /
                            (std::string(commit) + ".tree.json"),
                        kMaxTreeBytes);
  if (!text) return std::nullopt;
  auto json = ParseJson(*text, "tree cache");
  if (!json || !json->is_array()) return std::nullopt;
  std::vector<RepoFile> files;
  for (const auto& entry : *json) {
    if (!entry.is_object() || !entry.contains("path") || !entry["path"].is_string() ||
        !entry.contains("size") || !entry["size"].is_number_unsigned() || !entry.contains("etag") ||
        !entry["etag"].is_string() || !entry.contains("lfs") || !entry["lfs"].is_boolean()) {
      return std::nullopt;
    }
    RepoFile f{entry["path"].get<std::string>(), entry["size"].get<uint64_t>(),
               entry["etag"].get<std::string>(), entry["lfs"].get<bool>()};
    if (!IsSafeRepoPath(f.path)) return std::nullopt;
    files.push_back(std::move(f));
  }
  return files;
}

void HubCache::WriteTree(std::string_view repo_id, std::string_view commit,
                         const std::vector<RepoFile>& files) const {
  if (memfit_.empty()) return;
  nlohmann::json json = nlohmann::json::array();
  for (const auto& f : files) {
    json.push_back({{"path", f.path}, {"size", f.size}, {"etag", f.etag}, {"lfs", f.lfs}});
  }
  WriteAtomically(
      fs::path(memfit_) / "hub" / RepoFolderName(repo_id) / (std::string(commit) + ".tree.json"),
      json.dump());
}

// Binary header: magic, header_bytes, data_bytes, metadata count + (key, value) strings, tensor
// count + (name, dtype name, rank, dims..., begin, end). Integers are u64 little-endian, strings
// a u64 length and the bytes.
std::string SerializeHeader(const SafetensorsHeader& header) {
  std::string out(kHeaderMagic);
  PutU64(out, header.header_bytes);
  PutU64(out, header.data_bytes);
  PutU64(out, header.metadata.size());
  for (const auto& [k, v] : header.metadata) {
    PutString(out, k);
    PutString(out, v);
  }
  PutU64(out, header.tensors.size());
  for (const auto& t : header.tensors) {
    PutString(out, t.name);
    PutString(out, DtypeName(t.dtype));
    PutU64(out, t.shape.size());
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
  uint64_t count = 0;
  if (!r.U64(h.header_bytes) || !r.U64(h.data_bytes) || !r.U64(count) || count > r.left() / 16) {
    return std::nullopt;
  }
  for (uint64_t i = 0; i < count; ++i) {
    std::string k, v;
    if (!r.String(k) || !r.String(v)) return std::nullopt;
    h.metadata.emplace(std::move(k), std::move(v));
  }
  if (!r.U64(count) || count > r.left() / 40) return std::nullopt;
  h.tensors.resize(count);
  std::string last_dtype_name;
  Dtype last_dtype = Dtype::kF32;
  std::string dtype_name;
  for (auto& t : h.tensors) {
    uint64_t rank = 0;
    if (!r.String(t.name) || !r.String(dtype_name) || !r.U64(rank) || rank > r.left() / 8) {
      return std::nullopt;
    }
    if (dtype_name != last_dtype_name) {
      auto dtype = ParseSafetensorsDtype(dtype_name);
      if (!dtype) return std::nullopt;
      last_dtype = *dtype;
      last_dtype_name = dtype_name;
    }
    t.dtype = last_dtype;
    t.shape.resize(rank);
    for (auto& d : t.shape) {
      if (!r.U64(d)) return std::nullopt;
    }
    if (!r.U64(t.begin) || !r.U64(t.end) || t.end < t.begin) return std::nullopt;
  }
  if (r.left() != 0) return std::nullopt;
  return h;
}

// Binary index: magic, has_total (0/1), total, entry count + (tensor, shard) strings.
std::string SerializeIndex(const WeightIndex& index) {
  std::string out(kIndexMagic);
  PutU64(out, index.total_size ? 1 : 0);
  PutU64(out, index.total_size.value_or(0));
  PutU64(out, index.weight_map.size());
  for (const auto& [tensor, shard] : index.weight_map) {
    PutString(out, tensor);
    PutString(out, shard);
  }
  return out;
}

std::optional<WeightIndex> DeserializeIndex(std::string_view bytes) {
  if (!bytes.starts_with(kIndexMagic)) return std::nullopt;
  Reader r(bytes.substr(kIndexMagic.size()));
  uint64_t has_total = 0, total = 0, count = 0;
  if (!r.U64(has_total) || has_total > 1 || !r.U64(total) || !r.U64(count) || count > r.left() / 16) {
    return std::nullopt;
  }
  WeightIndex index;
  if (has_total) index.total_size = total;
  std::set<std::string> shards;
  auto hint = index.weight_map.end();
  for (uint64_t i = 0; i < count; ++i) {
    std::string tensor, shard;
    if (!r.String(tensor) || !r.String(shard)) return std::nullopt;
    shards.insert(shard);
    hint = index.weight_map.emplace_hint(hint, std::move(tensor), std::move(shard));
  }
  if (r.left() != 0) return std::nullopt;
  index.shards.assign(shards.begin(), shards.end());
  return index;
}

std::optional<WeightIndex> HubCache::ReadIndex(std::string_view etag) const {
  if (memfit_.empty() || !IsObjectId(etag)) return std::nullopt;
  auto bytes = ReadWhole(fs::path(memfit_) / "weight-indexes" / (std::string(etag) + ".bin"),
                         kMaxHeaderCacheBytes);
  if (!bytes) return std::nullopt;
  return DeserializeIndex(*bytes);
}

void HubCache::WriteIndex(std::string_view etag, const WeightIndex& index) const {
  if (memfit_.empty() || !IsObjectId(etag)) return;
  WriteAtomically(fs::path(memfit_) / "weight-indexes" / (std::string(etag) + ".bin"),
                  SerializeIndex(index));
}

std::optional<SafetensorsHeader> HubCache::ReadHeader(std::string_view etag) const {
  if (memfit_.empty() || !IsObjectId(etag)) return std::nullopt;
  auto bytes = ReadWhole(fs::path(memfit_) / "safetensors-headers" / (std::string(etag) + ".bin"),
                         kMaxHeaderCacheBytes);
  if (!bytes) return std::nullopt;
  return DeserializeHeader(*bytes);
}

void HubCache::WriteHeader(std::string_view etag, const SafetensorsHeader& header) const {
  if (memfit_.empty() || !IsObjectId(etag)) return;
  WriteAtomically(fs::path(memfit_) / "safetensors-headers" / (std::string(etag) + ".bin"),
                  SerializeHeader(header));
}

// Binary GGUF prefix: magic, file size (u64 little-endian), then the bytes themselves.
std::optional<HubCache::GgufPrefix> HubCache::ReadGgufPrefix(std::string_view etag) const {
  if (memfit_.empty() || !IsObjectId(etag)) return std::nullopt;
  auto bytes = ReadWhole(fs::path(memfit_) / "gguf-headers" / (std::string(etag) + ".bin"),
                         kMaxGgufPrefixBytes);
  if (!bytes || !bytes->starts_with(kGgufMagic)) return std::nullopt;
  Reader r(std::string_view(*bytes).substr(kGgufMagic.size()));
  GgufPrefix prefix;
  if (!r.U64(prefix.file_bytes)) return std::nullopt;
  const size_t start = kGgufMagic.size() + 8;
  if (bytes->size() - start > prefix.file_bytes) return std::nullopt;
  prefix.bytes = bytes->substr(start);
  return prefix;
}

void HubCache::WriteGgufPrefix(std::string_view etag, const GgufPrefix& prefix) const {
  if (memfit_.empty() || !IsObjectId(etag) || prefix.bytes.size() > kMaxGgufPrefixBytes) return;
  std::string out(kGgufMagic);
  PutU64(out, prefix.file_bytes);
  out += prefix.bytes;
  WriteAtomically(fs::path(memfit_) / "gguf-headers" / (std::string(etag) + ".bin"), out);
}

}  // namespace memfit::hubnet
