#pragma once
// A counting semaphore that serves waiters in arrival order: bounded uncached work where the
// request that waited longest goes next (std::counting_semaphore wakes an arbitrary waiter, which
// left some requests waiting seconds behind later ones under load).

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

namespace memfit::server {

class FifoSlots {
 public:
  explicit FifoSlots(size_t slots) : free_(slots) {}
  // Takes a slot, waiting at most `timeout` behind the requests that came first.
  bool Acquire(std::chrono::milliseconds timeout);
  void Release();
  size_t waiting() const;

 private:
  struct Waiter {
    bool granted = false;
  };
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  size_t free_;
  std::deque<Waiter*> queue_;
};

// Holds a slot for a scope.
class FifoSlot {
 public:
  explicit FifoSlot(FifoSlots& slots) : slots_(slots) {}
  ~FifoSlot() { slots_.Release(); }
  FifoSlot(const FifoSlot&) = delete;
  FifoSlot& operator=(const FifoSlot&) = delete;

 private:
  FifoSlots& slots_;
};

}  // namespace memfit::server
