#include "server/fifo_slots.h"

#include <algorithm>

namespace memfit::server {

bool FifoSlots::Acquire(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (free_ > 0 && queue_.empty()) {
    --free_;
    return true;
  }
  Waiter me;
  queue_.push_back(&me);
  if (cv_.wait_for(lock, timeout, [&] { return me.granted; })) return true;
  // Timed out: leave the queue (a grant cannot arrive now: it is given under the lock).
  queue_.erase(std::find(queue_.begin(), queue_.end(), &me));
  return false;
}

void FifoSlots::Release() {
  {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) {
      ++free_;
      return;
    }
    queue_.front()->granted = true;  // the slot passes to the oldest waiter directly
    queue_.pop_front();
  }
  cv_.notify_all();
}

size_t FifoSlots::waiting() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

}  // namespace memfit::server
