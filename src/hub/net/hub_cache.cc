// HF cache and memfit cache reads and writes (layout in hub_cache.h, docs/hub.md).

#include "hub/net/hub_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <utility>

#include "memfit/byte_source.h"
#include "formats/json.h"

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

void AppendU64Le(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// A cache file mapped read-only: decoding reads it in place, without a copy into a buffer
// (a large allocation costs more than the decoding after a run has freed many small ones).
// memfit replaces cache files by rename, never in place, so a mapping never sees one shrink.
class MappedFile {
 public:
  static std::optional<MappedFile> Open(const fs::path& path, uint64_t max_bytes) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    struct stat st {};
    MappedFile file;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > max_bytes) {
      ::close(fd);
      return std::nullopt;
    }
    file.size_ = static_cast<size_t>(st.st_size);
    if (file.size_ > 0) {
      void* p = ::mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        ::close(fd);
        return std::nullopt;
      }
      file.data_ = static_cast<const char*>(p);
    }
    ::close(fd);
    return file;
  }
  MappedFile(MappedFile&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
  }
  std::string_view bytes() const { return {data_ ? data_ : "", size_}; }

 private:
  MappedFile() = default;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

constexpr std::string_view kGgufMagic = "MFGGUF01";
constexpr uint64_t kMaxGgufPrefixBytes = 1ull << 30;

// The file of `etag` in `folder` of memfit's cache (weight-indexes, safetensors-headers,
// gguf-headers); none without a memfit cache or when `etag` is not an object id (it names the
// file, so it must not be a path).
std::optional<fs::path> EntryPath(const std::string& memfit_cache, std::string_view folder,
                                  std::string_view etag) {
  if (memfit_cache.empty() || !IsObjectId(etag)) return std::nullopt;
  return fs::path(memfit_cache) / folder / (std::string(etag) + ".bin");
}

// That file mapped, if it is there and holds at most `max_bytes`.
std::optional<MappedFile> OpenEntry(const std::string& memfit_cache, std::string_view folder,
                                    std::string_view etag, uint64_t max_bytes) {
  auto path = EntryPath(memfit_cache, folder, etag);
  if (!path) return std::nullopt;
  return MappedFile::Open(*path, max_bytes);
}

// `deserialize(bytes)` of that file's bytes, if it is there and holds at most `max_bytes`.
template <typename T>
std::optional<T> ReadEntry(const std::string& memfit_cache, std::string_view folder,
                           std::string_view etag, uint64_t max_bytes,
                           std::optional<T> (*deserialize)(std::string_view)) {
  auto file = OpenEntry(memfit_cache, folder, etag, max_bytes);
  if (!file) return std::nullopt;
  return deserialize(file->bytes());
}

// Writes `make_bytes()` (empty: nothing) to that file; called only when there is a file to write,
// so nothing is serialized without a memfit cache.
template <typename MakeBytes>
void WriteEntry(const std::string& memfit_cache, std::string_view folder, std::string_view etag,
                MakeBytes make_bytes) {
  auto path = EntryPath(memfit_cache, folder, etag);
  if (!path) return;
  const std::string bytes = make_bytes();
  if (!bytes.empty()) WriteAtomically(*path, bytes);
}

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

std::vector<RepoFile> HubCache::SnapshotGgufFiles(std::string_view repo_id,
                                                  std::string_view commit,
                                                  size_t max_files) const {
  std::vector<RepoFile> out;
  if (hf_.empty() || !IsObjectId(commit)) return out;
  const fs::path snapshot = fs::path(hf_) / RepoFolderName(repo_id) / "snapshots" / std::string(commit);
  std::error_code ec;
  if (!fs::is_directory(snapshot, ec)) return out;
  size_t seen = 0;
  for (auto it = fs::recursive_directory_iterator(snapshot, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (++seen > 16 * max_files || out.size() >= max_files) break;  // a bounded walk
    if (it.depth() >= 8) it.disable_recursion_pending();
    const fs::path& path = it->path();
    if (path.extension() != ".gguf" || !fs::is_regular_file(path, ec)) continue;  // follows links
    const std::string relative = path.lexically_relative(snapshot).generic_string();
    if (!IsSafeRepoPath(relative)) continue;
    RepoFile file{.path = relative, .size = fs::file_size(path, ec), .etag = "", .lfs = true};
    if (ec) continue;
    if (fs::is_symlink(fs::symlink_status(path, ec))) {
      const std::string blob = fs::read_symlink(path, ec).filename().string();
      if (!ec && IsObjectId(blob)) file.etag = blob;
    }
    out.push_back(std::move(file));
  }
  std::sort(out.begin(), out.end(),
            [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; });
  return out;
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
      DumpJson(json, -1));
}

std::optional<WeightIndex> HubCache::ReadIndex(std::string_view etag) const {
  return ReadEntry(memfit_, "weight-indexes", etag, kMaxHeaderCacheBytes, DeserializeIndex);
}

void HubCache::WriteIndex(std::string_view etag, const WeightIndex& index) const {
  WriteEntry(memfit_, "weight-indexes", etag, [&] { return SerializeIndex(index); });
}

std::optional<SafetensorsHeader> HubCache::ReadHeader(std::string_view etag) const {
  return ReadEntry(memfit_, "safetensors-headers", etag, kMaxHeaderCacheBytes, DeserializeHeader);
}

void HubCache::WriteHeader(std::string_view etag, const SafetensorsHeader& header) const {
  WriteEntry(memfit_, "safetensors-headers", etag, [&] { return SerializeHeader(header); });
}

// Binary GGUF prefix: magic, file size (u64 little-endian), then the bytes themselves.
std::optional<HubCache::GgufPrefix> HubCache::ReadGgufPrefix(std::string_view etag) const {
  auto file = OpenEntry(memfit_, "gguf-headers", etag, kMaxGgufPrefixBytes);
  if (!file) return std::nullopt;
  std::string_view bytes = file->bytes();
  const size_t start = kGgufMagic.size() + 8;
  if (!bytes.starts_with(kGgufMagic) || bytes.size() < start) return std::nullopt;
  GgufPrefix prefix;
  for (int i = 0; i < 8; ++i) {
    prefix.file_bytes |= uint64_t{static_cast<unsigned char>(bytes[kGgufMagic.size() + i])} << (8 * i);
  }
  if (bytes.size() - start > prefix.file_bytes) return std::nullopt;
  prefix.bytes = bytes.substr(start);
  return prefix;
}

void HubCache::WriteGgufPrefix(std::string_view etag, const GgufPrefix& prefix) const {
  if (prefix.bytes.size() > kMaxGgufPrefixBytes) return;
  WriteEntry(memfit_, "gguf-headers", etag, [&] {
    std::string out(kGgufMagic);
    AppendU64Le(out, prefix.file_bytes);
    out += prefix.bytes;
    return out;
  });
}

}  // namespace memfit::hubnet
