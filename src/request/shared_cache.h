#pragma once
// SharedCache<T>: a bounded, thread-safe LRU of immutable values (std::shared_ptr<const T>) that
// expire, with single flight. What the request layer keeps of resolved and described models
// (model_cache.cc), so a request for a model seen moments ago pays only for its own estimate.
// - bounded: at most `max_entries` values and `max_cost` in all (each value says its cost, e.g.
//   its tensors); the least recently used go first, and a value costing more than `max_cost` is
//   answered but not kept;
// - expiry: each value carries when it stops being valid (`Validity::expires_at`) and the files
//   it was read from (path, size, mtime; or "absent"): a value whose files changed is a miss;
// - single flight: concurrent misses of one key run `compute` once and all get its answer;
// - errors are never kept: a failed compute answers its own flight only.
// Time is passed in, so that tests drive expiry without sleeping.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memfit/result.h"

namespace memfit {

// A file as it was when a value was read from it; `exists` false: it was absent.
struct FileStamp {
  std::string path;
  bool exists = false;
  uint64_t size_bytes = 0;
  int64_t mtime_ns = 0;
  bool is_directory = false;

  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

// The file's stamp now (one stat; errors read as absent).
inline FileStamp StampFile(const std::string& path) {
  namespace fs = std::filesystem;
  FileStamp stamp{.path = path};
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return stamp;
  stamp.exists = true;
  stamp.is_directory = fs::is_directory(status);
  if (!stamp.is_directory) {
    const uintmax_t size = fs::file_size(path, ec);
    stamp.size_bytes = ec ? 0 : static_cast<uint64_t>(size);
  }
  const auto mtime = fs::last_write_time(path, ec);
  stamp.mtime_ns = ec ? 0
                      : std::chrono::duration_cast<std::chrono::nanoseconds>(
                            mtime.time_since_epoch())
                            .count();
  return stamp;
}

struct Validity {
  using Clock = std::chrono::steady_clock;
  Clock::time_point expires_at = Clock::time_point::max();  // max: never by time
  std::vector<FileStamp> files;                             // each must still stamp the same

  bool StillValid(Clock::time_point now) const {
    if (now >= expires_at) return false;
    for (const FileStamp& file : files) {
      if (!(StampFile(file.path) == file)) return false;
    }
    return true;
  }
};

template <typename T>
class SharedCache {
 public:
  using Clock = Validity::Clock;
  using Value = std::shared_ptr<const T>;
  // What a miss computes: the value and how long it stays valid.
  struct Computed {
    Value value;
    Validity validity;
    uint64_t cost = 1;  // against max_cost
  };
  struct Limits {
    size_t max_entries = 0;  // 0: keep nothing
    uint64_t max_cost = UINT64_MAX;
  };
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;   // computes run (one per flight)
    uint64_t shared = 0;   // waited for another caller's compute
    uint64_t expired = 0;  // found but no longer valid
    uint64_t evicted = 0;  // dropped for room
  };

  explicit SharedCache(Limits limits = {}) : limits_(limits) {}

  // The valid value for `key`, else `compute()`'s (kept when it succeeds and the cache has room
  // for any entry). `compute` runs without the lock; concurrent callers of one key wait for it.
  Result<Value> Get(const std::string& key, const std::function<Result<Computed>()>& compute,
                    Clock::time_point now = Clock::now()) {
    std::shared_ptr<Flight> flight;
    bool owner = false;
    {
      std::unique_lock lock(mutex_);
      if (auto it = index_.find(key); it != index_.end()) {
        if (it->second->validity.StillValid(now)) {
          order_.splice(order_.begin(), order_, it->second);
          ++stats_.hits;
          return it->second->value;
        }
        ++stats_.expired;
        Erase(it);
      }
      auto& slot = flights_[key];
      if (!slot) {
        slot = std::make_shared<Flight>();
        owner = true;
        ++stats_.misses;
      } else {
        ++stats_.shared;
      }
      flight = slot;
      if (!owner) {
        flight->cv.wait(lock, [&] { return flight->result.has_value(); });
        return *flight->result;
      }
    }
    Result<Computed> computed = RunCompute(compute);
    Result<Value> answer = computed ? Result<Value>(computed->value) : Result<Value>(computed.error());
    {
      std::lock_guard lock(mutex_);
      if (computed && limits_.max_entries > 0 && computed->cost <= limits_.max_cost) {
        Insert(key, std::move(*computed));
      }
      flight->result.emplace(answer);
      flights_.erase(key);
    }
    flight->cv.notify_all();
    return answer;
  }

  // New limits; entries over them go, the least recently used first.
  void SetLimits(Limits limits) {
    std::lock_guard lock(mutex_);
    limits_ = limits;
    Trim();
  }
  void Clear() {
    std::lock_guard lock(mutex_);
    order_.clear();
    index_.clear();
    cost_ = 0;
  }
  size_t size() const {
    std::lock_guard lock(mutex_);
    return order_.size();
  }
  uint64_t cost() const {
    std::lock_guard lock(mutex_);
    return cost_;
  }
  Stats stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }

 private:
  struct Entry {
    std::string key;
    Value value;
    Validity validity;
    uint64_t cost = 1;
  };
  struct Flight {
    std::optional<Result<Value>> result;
    std::condition_variable cv;
  };

  static Result<Computed> RunCompute(const std::function<Result<Computed>()>& compute) {
    try {
      return compute();
    } catch (const std::exception& e) {  // a waiter must never wait forever
      return MakeError("internal error: {}", e.what());
    }
  }

  void Insert(const std::string& key, Computed computed) {
    if (auto it = index_.find(key); it != index_.end()) Erase(it);
    cost_ += computed.cost;
    order_.push_front(
        Entry{key, std::move(computed.value), std::move(computed.validity), computed.cost});
    index_[key] = order_.begin();
    Trim();
  }

  void Trim() {
    while (!order_.empty() && (order_.size() > limits_.max_entries || cost_ > limits_.max_cost)) {
      Erase(index_.find(order_.back().key));
      ++stats_.evicted;
    }
  }

  void Erase(typename std::unordered_map<std::string, typename std::list<Entry>::iterator>::iterator it) {
    cost_ -= it->second->cost;
    order_.erase(it->second);
    index_.erase(it);
  }

  Limits limits_;
  uint64_t cost_ = 0;
  mutable std::mutex mutex_;
  std::list<Entry> order_;
  std::unordered_map<std::string, typename std::list<Entry>::iterator> index_;
  std::unordered_map<std::string, std::shared_ptr<Flight>> flights_;
  Stats stats_;
};

}  // namespace memfit
