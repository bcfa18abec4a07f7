#pragma once
// The caches the Hub client reads and writes, all under paths built from validated names:
// - the Hugging Face cache ($HF_HUB_CACHE) in huggingface_hub's layout, for small files:
//     models--{org}--{name}/blobs/{etag}, snapshots/{commit}/{path} -> ../../blobs/{etag},
//     refs/{revision} (text: commit);
// - memfit's own cache ($MEMFIT_CACHE): the repository file list per commit
//     hub/models--{org}--{name}/{commit}.tree.json, and parsed safetensors headers keyed by the
//     file's etag (sha256 of an LFS file): safetensors-headers/{etag}.bin (binary, see .cc),
//     parsed weight indexes (weight-indexes/{etag}.bin) and the header bytes of GGUF files
//     (gguf-headers/{etag}.bin).
// Cache writes are best effort (a read-only cache is not an error); reads treat anything
// malformed as a miss.

#include <optional>
#include <string>
#include <vector>

#include "hub/net/cache_codec.h"
#include "hub/net/hub_api.h"
#include "memfit/result.h"
#include "memfit/safetensors.h"

namespace memfit::hubnet {

// "models--org--name" (REPO_ID_SEPARATOR "--").
std::string RepoFolderName(std::string_view repo_id);

class HubCache {
 public:
  HubCache(std::string hf_hub_cache, std::string memfit_cache)
      : hf_(std::move(hf_hub_cache)), memfit_(std::move(memfit_cache)) {}

  // refs/{revision} -> commit; a 40-hex revision is its own commit. nullopt when unknown.
  std::optional<std::string> ReadRef(std::string_view repo_id, std::string_view revision) const;
  void WriteRef(std::string_view repo_id, std::string_view revision, std::string_view commit) const;

  // snapshots/{commit}/{path}: its bytes when present and at most `max_bytes`.
  std::optional<std::string> ReadSnapshotFile(std::string_view repo_id, std::string_view commit,
                                              std::string_view path, uint64_t max_bytes) const;
  // The local path of snapshots/{commit}/{path} when the whole file (`size` bytes) is there.
  std::optional<std::string> FullSnapshotFile(std::string_view repo_id, std::string_view commit,
                                              std::string_view path, uint64_t size) const;
  // The .gguf files under snapshots/{commit} (downloaded there by huggingface_hub, e.g.
  // `huggingface-cli download REPO FILE.gguf`), sorted by path, each with its size and, when its
  // link names a blob that is an object id, that etag; at most `max_files`, in folders at most
  // 8 deep, symlinked folders not followed. Empty when none.
  std::vector<RepoFile> SnapshotGgufFiles(std::string_view repo_id, std::string_view commit,
                                          size_t max_files = 4096) const;
  // blobs/{etag} + the snapshot symlink (a copy where symlinks fail).
  void WriteSnapshotFile(std::string_view repo_id, std::string_view commit, const RepoFile& file,
                         std::string_view bytes) const;

  std::optional<std::vector<RepoFile>> ReadTree(std::string_view repo_id,
                                                std::string_view commit) const;
  void WriteTree(std::string_view repo_id, std::string_view commit,
                 const std::vector<RepoFile>& files) const;

  // Parsed weight indexes keyed by the index file's etag (weight-indexes/{etag}.bin): the
  // index of a large model is megabytes of JSON, too slow to parse on every cached run.
  std::optional<WeightIndex> ReadIndex(std::string_view etag) const;
  void WriteIndex(std::string_view etag, const WeightIndex& index) const;

  std::optional<SafetensorsHeader> ReadHeader(std::string_view etag) const;
  void WriteHeader(std::string_view etag, const SafetensorsHeader& header) const;

  // The first bytes of a GGUF file, as many as its reader read (the header and at most one read
  // chunk more), keyed by the file's etag (gguf-headers/{etag}.bin), with the file's size.
  struct GgufPrefix {
    uint64_t file_bytes = 0;
    std::string bytes;
  };
  std::optional<GgufPrefix> ReadGgufPrefix(std::string_view etag) const;
  void WriteGgufPrefix(std::string_view etag, const GgufPrefix& prefix) const;

 private:
  std::string hf_;
  std::string memfit_;
};


}  // namespace memfit::hubnet
