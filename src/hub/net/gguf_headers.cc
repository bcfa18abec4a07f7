// GGUF headers of Hub files (see gguf_headers.h).

#include "hub/net/gguf_headers.h"

#include "hub/net/hub_file_source.h"
#include "memfit/byte_source.h"

namespace memfit::hubnet {
namespace {

constexpr uint64_t kMaxHeaderBytes = 256ull << 20;
constexpr uint64_t kFirstWindowBytes = 1ull << 20;
constexpr uint64_t kMaxWindowBytes = 32ull << 20;

// Passes reads through and keeps a copy of the bytes read from offset 0 on (the GGUF reader
// reads sequentially), for the cache; refuses reads past `cap` bytes.
class RecordingSource final : public ByteSource {
 public:
  RecordingSource(ByteSource& inner, uint64_t cap) : inner_(inner), cap_(cap) {}
  Result<uint64_t> Size() override { return inner_.Size(); }
  std::string Name() const override { return inner_.Name(); }
  Result<std::string> Read(uint64_t offset, size_t length) override {
    if (offset > cap_ || length > cap_ - offset) {
      return MakeError("header larger than {} bytes, the most memfit reads over the network", cap_);
    }
    MEMFIT_ASSIGN_OR_RETURN(std::string bytes, inner_.Read(offset, length));
    if (contiguous_ && offset <= recorded_.size()) {
      if (offset + bytes.size() > recorded_.size()) {
        recorded_.append(bytes, static_cast<size_t>(recorded_.size() - offset), std::string::npos);
      }
    } else {
      contiguous_ = false;
    }
    return bytes;
  }
  // The bytes from offset 0, or nullopt when the reads were not one run from the start.
  std::optional<std::string> TakeRecorded() {
    if (!contiguous_) return std::nullopt;
    return std::move(recorded_);
  }

 private:
  ByteSource& inner_;
  uint64_t cap_;
  bool contiguous_ = true;
  std::string recorded_;
};

}  // namespace

GgufLimits HubGgufLimits() {
  GgufLimits limits;
  limits.chunk_bytes = 64 << 10;
  limits.max_header_bytes = kMaxHeaderBytes;
  return limits;
}

Result<std::optional<GgufFile>> ReadGgufFromHub(HubSession& s, const RepoFile& file,
                                                const ClientFactory& client) {
  const GgufLimits limits = HubGgufLimits();
  if (auto local = s.cache.FullSnapshotFile(s.ref.repo_id, s.commit, file.path, file.size)) {
    auto source = OpenFileByteSource(*local);
    MEMFIT_ASSIGN_OR_RETURN(auto header, ReadGgufHeader(*source));
    s.stats.headers_cached++;
    return std::optional<GgufFile>(std::move(header));
  }
  const std::string url = s.ResolveUrl(file.path);
  if (auto cached = s.cache.ReadGgufPrefix(file.etag); cached && cached->file_bytes == file.size) {
    // The reader asks for exactly the bytes it asked for when they were cached; a cache file that
    // does not hold them (or does not parse) is a miss.
    PrefixByteSource source(std::move(cached->bytes), file.size, RedactUrl(url));
    if (auto header = ReadGgufHeader(source, limits)) {
      s.stats.headers_cached++;
      return std::optional<GgufFile>(std::move(*header));
    }
  }
  if (!s.online) return std::optional<GgufFile>();
  HubFileSource remote(&client(), s.settings, s.stats, url, s.Context(file.path), file.size);
  remote.SetWindow(kFirstWindowBytes, kMaxWindowBytes);
  RecordingSource recording(remote, kMaxHeaderBytes + limits.chunk_bytes);
  MEMFIT_ASSIGN_OR_RETURN(auto header, ReadGgufHeader(recording, limits));
  if (auto bytes = recording.TakeRecorded()) {
    s.cache.WriteGgufPrefix(file.etag, {.file_bytes = file.size, .bytes = std::move(*bytes)});
  }
  s.stats.headers_fetched++;
  return std::optional<GgufFile>(std::move(header));
}

}  // namespace memfit::hubnet
