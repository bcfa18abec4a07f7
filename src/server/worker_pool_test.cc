#include "server/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace memfit::server {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(WorkerPool, RefusesWhenTheQueueIsFull) {
  WorkerPool pool(1, 1);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  std::atomic<int> ran{0};
  std::function<void()> blocker = [&] {
    started.set_value();
    released.wait();
    ++ran;
  };
  ASSERT_TRUE(pool.TryPost(blocker));
  started.get_future().wait();  // the one worker is busy
  std::function<void()> queued = [&] { ++ran; };
  ASSERT_TRUE(pool.TryPost(queued));
  std::function<void()> refused = [&] { ++ran; };
  EXPECT_FALSE(pool.TryPost(refused));
  EXPECT_TRUE(static_cast<bool>(refused));  // left to the caller
  release.set_value();
  pool.Shutdown();
  EXPECT_GE(ran.load(), 1);
}

TEST(WorkerPool, ShutdownDropsQueuedTasks) {
  auto pool = std::make_unique<WorkerPool>(2, 100);
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i) {
    std::function<void()> task = [&] { ++ran; };
    pool->TryPost(task);
  }
  pool.reset();  // returns; every task either ran or was destroyed
  EXPECT_LE(ran.load(), 50);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::server
