#pragma once
// A fake Hugging Face Hub for tests and benchmarks: two loopback HTTP servers (cpp-httplib), the
// "Hub" with the real URL scheme (/api/models/{id}/revision/{rev}, /api/models/{id}/tree/{rev},
// /{id}/resolve/{rev}/{path}) and a "CDN" on another port that LFS files redirect to with a
// signed-looking URL. Knobs inject what the real Hub does: X-Error-Code errors, gated and private
// repositories, rate limiting, server errors, latency, servers that ignore Range, short bodies.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace memfit::testing {

struct FakeRepo {
  std::string id;                                // "org/name"
  std::string commit;                            // 40 hex digits
  std::map<std::string, std::string> refs;       // branch/tag -> commit ("main" added if absent)
  std::map<std::string, std::string> files;      // path -> bytes
  // A file larger than its stored bytes (zeros follow): weights of a big model without the RAM.
  std::map<std::string, uint64_t> logical_sizes;
  bool gated = false;                            // files need the valid token
  bool is_private = false;                       // everything needs the valid token
};

class FakeHub {
 public:
  FakeHub();
  ~FakeHub();
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  std::string endpoint() const;  // http://127.0.0.1:<port>
  void AddRepo(FakeRepo repo);

  static constexpr const char* kToken = "hf_fakeSECRETtoken1234567890";

  // Knobs.
  std::atomic<int> latency_ms{0};          // slept before every answer, both servers
  std::atomic<bool> ranges{true};          // false: 200 with the whole file, Range ignored
  std::atomic<int> fail_status{0};         // answer the next `fail_count` requests with this
  std::atomic<int> fail_count{0};
  std::atomic<int> retry_after_s{-1};      // Retry-After sent with fail_status (-1: none)
  std::atomic<bool> short_bodies{false};   // CDN sends half of each range
  std::atomic<int> stall_ms{0};            // sleep this long before answering (timeouts)
  std::atomic<size_t> tree_page_size{0};   // >0: paginate the tree with Link headers
  // Requests whose target contains `slow_target` wait `slow_ms` more (set before use), or less
  // once the CDN has had `slow_until_cdn_requests` requests (when > 0).
  std::string slow_target;
  std::atomic<int> slow_ms{0};
  std::atomic<int> slow_until_cdn_requests{0};

  // Observations.
  std::atomic<int> hub_requests{0};
  std::atomic<int> cdn_requests{0};
  std::atomic<bool> cdn_saw_authorization{false};
  std::atomic<bool> hub_saw_token{false};
  // How many requests had arrived when the last slow request finished waiting.
  std::atomic<size_t> requests_before_slow_answer{0};
  std::vector<std::string> paths() const;  // raw request targets, in order (hub and cdn)
  // The same with arrival times ("   12.3 ms  hub /api/..."), ms since construction or ClearLog.
  std::vector<std::string> timeline() const;
  void ClearLog();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Random-looking but deterministic hex ids for fixtures.
std::string FakeSha1(const std::string& seed);
std::string FakeSha256(const std::string& seed);
// Writes `files` (path -> bytes) under `dir`, creating folders.
void WriteFiles(const std::string& dir, const std::map<std::string, std::string>& files);

}  // namespace memfit::testing
