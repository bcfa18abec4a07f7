#pragma once
// Keeps Hub lookups from stalling answers (docs/hub.md, "When the Hub is slow or down"):
// - single flight: concurrent lookups of the same model share one lookup and its answer;
// - failure memory: once the Hub could not be reached (connection refused, DNS, timeout), it is
//   not asked again for a backoff window (5 s, doubling to 5 min); lookups meanwhile fail at once
//   with the remembered error, word for word (an answer never depends on which lookup met the
//   outage), so the caller answers from the caches or the catalog. When the
//   window ends one lookup probes the Hub while the others keep failing fast; an answer from the
//   Hub (any HTTP status) clears the memory.
// One guard serves a whole process (DefaultHubGuard); thread-safe.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "memfit/hub.h"
#include "memfit/result.h"

namespace memfit {

// A lookup's answer and, when it failed, why (what single flight hands to every waiter).
struct HubOutcome {
  Result<HubResolution> result;
  HubFailure failure = HubFailure::kNone;
};

class HubGuard {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    uint32_t first_backoff_ms = 5'000;
    uint32_t max_backoff_ms = 300'000;
  };
  HubGuard() = default;
  explicit HubGuard(Options options) : options_(options) {}

  // Whether `endpoint` may be asked at `now`. When it may not: the remembered error.
  std::optional<Error> Blocked(const std::string& endpoint, Clock::time_point now = Clock::now());
  // The Hub at `endpoint` could not be reached: remember `why` and back off.
  void RecordOutage(const std::string& endpoint, const Error& why,
                    Clock::time_point now = Clock::now());
  // The Hub answered (any status): forget earlier outages.
  void RecordAnswer(const std::string& endpoint);
  void Clear();

  // Runs `work` for `key` unless the same key is already running, in which case it waits for that
  // run and returns a copy of its result. `*shared` (optional) says which happened.
  HubOutcome Shared(const std::string& key, const std::function<HubOutcome()>& work,
                    bool* shared = nullptr);

 private:
  struct Outage {
    Error why;
    Clock::time_point retry_at;
    uint32_t backoff_ms = 0;
    bool probing = false;
  };
  struct Flight {
    bool done = false;
    std::optional<HubOutcome> result;
    std::condition_variable cv;
  };
  Options options_;
  std::mutex mutex_;
  std::map<std::string, Outage> outages_;
  std::map<std::string, std::shared_ptr<Flight>> flights_;
};

// The process's guard: HubSettingsFromEnvironment points every lookup at it.
HubGuard& DefaultHubGuard();

}  // namespace memfit
