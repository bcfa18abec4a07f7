#pragma once
// The Hub's API answers, parsed (pure, no I/O; every input is untrusted server output):
//   GET /api/models/{id}/revision/{rev}           the model info: its commit "sha"
//   GET /api/models/{id}/tree/{rev}?recursive=true  one page of files (path, size, oid, lfs)
//   Link: <...>; rel="next"                       the next page of the tree (RFC 8288)
//   Content-Range: bytes 0-99/1234                what a ranged answer holds (RFC 9110 14.4)
// Field names as huggingface_hub reads them (hf_api.py: RepoFile, ModelInfo).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memfit/local_source.h"
#include "memfit/result.h"

namespace memfit::hubnet {

// Largest API answer accepted (a tree page, a model info).
inline constexpr uint64_t kMaxApiBytes = 64ull << 20;

// One file of a repository, as the tree API lists it.
struct RepoFile {
  std::string path;
  uint64_t size = 0;  // "lfs"."size" for LFS files, else "size"
  std::string etag;   // "lfs"."oid" (sha256) for LFS files, else "oid" (the git blob sha1)
  bool lfs = false;
};

// A git or LFS object id: 40 or 64 lowercase hex digits (safe as a file name).
bool IsObjectId(std::string_view s);
// IsSafeRepoPath (memfit/local_source.h): the local HF-cache lookup uses it too.
using memfit::IsSafeRepoPath;

// The commit of a model info answer: "sha", 40 lowercase hex digits. `url` names it in errors.
Result<std::string> ParseModelInfoSha(std::string_view body, std::string_view url);

// The files of one tree page, in the page's order; "directory" entries are skipped. Each file
// needs a safe "path", an unsigned "size" and an "oid"; an "lfs" object, when present, gives the
// size and the sha256 etag.
Result<std::vector<RepoFile>> ParseTreePage(std::string_view body, std::string_view url);

// The target of the first link whose rel is "next" in a Link header value, or "" when none.
// Handles several links, quoted and unquoted rel values, and commas inside <...>.
std::string NextPageLink(std::string_view link_header);

// A Content-Range value: "bytes FIRST-LAST/TOTAL", "bytes FIRST-LAST/*" or "bytes */TOTAL".
struct ContentRange {
  std::optional<uint64_t> first, last;  // both or neither; first <= last
  std::optional<uint64_t> total;        // absent for "*"
};
std::optional<ContentRange> ParseContentRange(std::string_view value);

// A non-negative decimal integer without sign or spaces ("0", "1234"); nullopt on anything
// else or on overflow.
std::optional<uint64_t> ParseDecimalU64(std::string_view s);

}  // namespace memfit::hubnet
