// SharedCache: hits, misses, the bounds, expiry by time and by file, single flight, errors.

#include "request/shared_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <latch>
#include <thread>

#include <unistd.h>

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using Cache = SharedCache<std::string>;
using Clock = Cache::Clock;

// A compute that counts its runs and answers `value` (valid forever unless told).
std::function<Result<Cache::Computed>()> Answer(std::string value, int* runs,
                                                Validity validity = {}, uint64_t cost = 1) {
  return [=]() -> Result<Cache::Computed> {
    ++*runs;
    return Cache::Computed{std::make_shared<const std::string>(value), validity, cost};
  };
}

TEST(SharedCacheTest, HitReturnsTheSameValueWithoutComputing) {
  Cache cache({.max_entries = 4});
  int runs = 0;
  auto first = cache.Get("a", Answer("A", &runs));
  ASSERT_TRUE(first);
  auto second = cache.Get("a", Answer("other", &runs));
  ASSERT_TRUE(second);
  EXPECT_EQ(**second, "A");
  EXPECT_EQ(first->get(), second->get());  // the same object, not a copy
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

TEST(SharedCacheTest, DistinctKeysMiss) {
  Cache cache({.max_entries = 4});
  int runs = 0;
  EXPECT_EQ(**cache.Get("a", Answer("A", &runs)), "A");
  EXPECT_EQ(**cache.Get("b", Answer("B", &runs)), "B");
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(SharedCacheTest, ZeroEntriesKeepsNothing) {
  Cache cache({.max_entries = 0});
  int runs = 0;
  (void)cache.Get("a", Answer("A", &runs));
  (void)cache.Get("a", Answer("A", &runs));
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(SharedCacheTest, EvictsTheLeastRecentlyUsedPastMaxEntries) {
  Cache cache({.max_entries = 2});
  int runs = 0;
  (void)cache.Get("a", Answer("A", &runs));
  (void)cache.Get("b", Answer("B", &runs));
  (void)cache.Get("a", Answer("A", &runs));  // a is now the most recent
  (void)cache.Get("c", Answer("C", &runs));  // evicts b
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.stats().evicted, 1u);
  (void)cache.Get("a", Answer("A", &runs));
  EXPECT_EQ(runs, 3);  // still there
  (void)cache.Get("b", Answer("B", &runs));
  EXPECT_EQ(runs, 4);  // was evicted
}

TEST(SharedCacheTest, EvictsPastMaxCostAndNeverKeepsAValueOverIt) {
  Cache cache({.max_entries = 100, .max_cost = 10});
  int runs = 0;
  (void)cache.Get("a", Answer("A", &runs, {}, 4));
  (void)cache.Get("b", Answer("B", &runs, {}, 4));
  EXPECT_EQ(cache.cost(), 8u);
  (void)cache.Get("c", Answer("C", &runs, {}, 4));  // 12 > 10: a goes
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.cost(), 8u);
  auto huge = cache.Get("huge", Answer("H", &runs, {}, 11));
  ASSERT_TRUE(huge);
  EXPECT_EQ(**huge, "H");  // answered
  EXPECT_EQ(cache.size(), 2u);  // not kept, nothing evicted for it
  cache.SetLimits({.max_entries = 1, .max_cost = 10});
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.cost(), 4u);
  cache.Clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.cost(), 0u);
}

TEST(SharedCacheTest, ExpiresAtItsTime) {
  Cache cache({.max_entries = 4});
  int runs = 0;
  const Clock::time_point t0 = Clock::now();
  const Validity ten_seconds{.expires_at = t0 + std::chrono::seconds(10), .files = {}};
  (void)cache.Get("a", Answer("A", &runs, ten_seconds), t0);
  (void)cache.Get("a", Answer("A", &runs, ten_seconds), t0 + std::chrono::seconds(9));
  EXPECT_EQ(runs, 1);
  auto later = cache.Get("a", Answer("A2", &runs, ten_seconds), t0 + std::chrono::seconds(10));
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(**later, "A2");
  EXPECT_EQ(cache.stats().expired, 1u);
}

TEST(SharedCacheTest, AChangedFileInvalidates) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("memfit-shared-cache-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "config.json").string();
  const std::string absent = (dir / "not-yet").string();
  std::ofstream(path) << "{}";
  Cache cache({.max_entries = 4});
  int runs = 0;
  auto stamped = [&] {
    return Validity{.expires_at = Clock::time_point::max(),
                    .files = {StampFile(path), StampFile(absent)}};
  };
  (void)cache.Get("a", Answer("A", &runs, stamped()));
  (void)cache.Get("a", Answer("A", &runs, stamped()));
  EXPECT_EQ(runs, 1);
  std::ofstream(path) << "{\"hidden_size\": 4096}";  // another size
  (void)cache.Get("a", Answer("A", &runs, stamped()));
  EXPECT_EQ(runs, 2);
  (void)cache.Get("a", Answer("A", &runs, stamped()));
  EXPECT_EQ(runs, 2);
  std::ofstream(absent) << "x";  // a file that was absent appears
  (void)cache.Get("a", Answer("A", &runs, stamped()));
  EXPECT_EQ(runs, 3);
  std::filesystem::remove_all(dir);
  (void)cache.Get("a", Answer("A", &runs, stamped()));  // and both go
  EXPECT_EQ(runs, 4);
}

TEST(SharedCacheTest, ErrorsAreNotKept) {
  Cache cache({.max_entries = 4});
  int runs = 0;
  auto fail = [&]() -> Result<Cache::Computed> {
    ++runs;
    return WithKind(MakeError("hub: unreachable"), ErrorKind::kUnavailable);
  };
  auto first = cache.Get("a", fail);
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().kind, ErrorKind::kUnavailable);
  EXPECT_FALSE(cache.Get("a", fail));
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(**cache.Get("a", Answer("A", &runs)), "A");
}

TEST(SharedCacheTest, ConcurrentMissesComputeOnce) {
  Cache cache({.max_entries = 4});
  constexpr int kThreads = 8;
  std::atomic<int> runs = 0;
  std::latch started(kThreads);
  std::atomic<bool> release = false;
  auto slow = [&]() -> Result<Cache::Computed> {
    ++runs;
    while (!release) std::this_thread::yield();
    return Cache::Computed{std::make_shared<const std::string>("A"), {}, 1};
  };
  std::vector<std::thread> threads;
  std::vector<const std::string*> seen(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      started.count_down();
      auto value = cache.Get("a", slow);
      seen[i] = value ? value->get() : nullptr;
    });
  }
  started.wait();
  // Every thread is at or past Get; the compute waits until all have joined its flight.
  while (cache.stats().misses + cache.stats().shared < kThreads) std::this_thread::yield();
  release = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(cache.stats().shared, kThreads - 1u);
  for (const std::string* p : seen) EXPECT_EQ(p, seen[0]);
  EXPECT_NE(seen[0], nullptr);
}

TEST(SharedCacheTest, ConcurrentMixedKeysStayConsistent) {
  Cache cache({.max_entries = 3});
  std::vector<std::thread> threads;
  std::atomic<int> wrong = 0;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string key = std::to_string((i * 7 + t) % 5);
        auto value = cache.Get(key, [&]() -> Result<Cache::Computed> {
          return Cache::Computed{std::make_shared<const std::string>("v" + key), {}, 1};
        });
        if (!value || **value != "v" + key) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_LE(cache.size(), 3u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
