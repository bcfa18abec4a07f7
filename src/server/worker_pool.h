#pragma once
// A fixed set of threads running tasks from a bounded queue: the server hands each parsed request
// to it so that Router::Handle (which may wait seconds for the Hub) never runs on an io thread.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace memfit::server {

class WorkerPool {
 public:
  // `threads` >= 1 threads; at most `max_queued` tasks wait (0: none may wait).
  WorkerPool(int threads, size_t max_queued);
  // Stops: tasks running finish, tasks still queued are destroyed without running.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`; false (and `task` untouched) when the queue is full or the pool is stopping.
  bool TryPost(std::function<void()>& task);
  // Runs no new task after this; wakes and joins the threads (idempotent).
  void Shutdown();

 private:
  void Run();

  const size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace memfit::server
