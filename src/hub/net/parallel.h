#pragma once
// A bounded pool of worker threads, each with its own HttpClient (one libcurl handle, so its
// connections are reused across the items it handles).

#include <algorithm>
#include <atomic>
#include <optional>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "hub/net/http_client.h"

namespace memfit::hubnet {

// Runs fn(i, client) for every i in [0, n) on up to `max_threads` threads and returns the error
// of the lowest index that failed (later items are skipped after a failure). `client` is made
// on first use in each thread.
inline Status ParallelFor(size_t n, uint32_t max_threads, const HubSettings& settings,
                          HubStats& stats, const std::function<Status(size_t, const ClientFactory&)>& fn) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  size_t error_index = n;
  std::optional<Error> error;
  auto worker = [&] {
    std::unique_ptr<HttpClient> client;
    ClientFactory get_client = [&]() -> HttpClient& {
      if (!client) client = std::make_unique<HttpClient>(settings, stats);
      return *client;
    };
    for (size_t i; !failed.load() && (i = next.fetch_add(1)) < n;) {
      Status status = fn(i, get_client);
      if (!status) {
        std::lock_guard lock(mutex);
        if (i < error_index) {
          error_index = i;
          error = status.error();
        }
        failed = true;
      }
    }
  };
  size_t threads = std::min<size_t>(n, std::max<uint32_t>(1, max_threads));
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (error) return *error;
  return Ok{};
}

}  // namespace memfit::hubnet
