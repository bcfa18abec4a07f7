#include "server/worker_pool.h"

#include <algorithm>

namespace memfit::server {

WorkerPool::WorkerPool(int threads, size_t max_queued) : max_queued_(max_queued) {
  threads_.reserve(static_cast<size_t>(std::max(1, threads)));
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() { Shutdown(); }

bool WorkerPool::TryPost(std::function<void()>& task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= max_queued_) return false;
    queue_.push_back(std::move(task));
  }
  ready_.notify_one();
  return true;
}

void WorkerPool::Shutdown() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  ready_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  // `dropped` (tasks that never ran) is destroyed here, after every thread has stopped.
}

void WorkerPool::Run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace memfit::server
