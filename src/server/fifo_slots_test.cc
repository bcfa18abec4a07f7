#include "server/fifo_slots.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace memfit::server {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using namespace std::chrono_literals;

TEST(FifoSlots, WaitersGoInArrivalOrder) {
  FifoSlots slots(1);
  ASSERT_TRUE(slots.Acquire(0ms));
  std::mutex m;
  std::vector<int> order;
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      ASSERT_TRUE(slots.Acquire(60s));
      {
        std::lock_guard lock(m);
        order.push_back(i);
      }
      slots.Release();
    });
    // The next thread starts once this one is queued: arrival order is known.
    while (slots.waiting() != static_cast<size_t>(i + 1)) std::this_thread::yield();
  }
  slots.Release();
  for (auto& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(FifoSlots, TimeoutLeavesTheQueueAndSlotsAreNotLost) {
  FifoSlots slots(2);
  ASSERT_TRUE(slots.Acquire(0ms));
  ASSERT_TRUE(slots.Acquire(0ms));
  EXPECT_FALSE(slots.Acquire(20ms));
  EXPECT_EQ(slots.waiting(), 0u);
  slots.Release();
  slots.Release();
  EXPECT_TRUE(slots.Acquire(0ms));
  EXPECT_TRUE(slots.Acquire(0ms));
  EXPECT_FALSE(slots.Acquire(0ms));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::server
