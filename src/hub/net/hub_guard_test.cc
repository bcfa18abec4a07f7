// HubGuard: failure memory with backoff, probing, single flight; and ResolveHubModel under it
// against the fake Hub (a stalled Hub costs one timeout; concurrent lookups send one set of
// requests; the lookup deadline).

#include "hub/net/hub_guard.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "hub_fixtures.h"
#include "memfit/hub.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)
using Clock = HubGuard::Clock;
using std::chrono::milliseconds;
using testing::FakeHub;
using testing::TestSettings;
using testing::TinyLlamaRepo;

Result<HubResolution> Resolve(const HubSettings& s, HubFailure* failure = nullptr) {
  auto ref = ParseHubRef("org/tiny-llama", s.endpoint);
  if (!ref) return ref.error();
  HubStats stats;
  return ResolveHubModel(*ref, {}, s, stats, failure);
}

size_t InfoRequests(const FakeHub& hub) {
  auto paths = hub.paths();
  return static_cast<size_t>(std::count_if(paths.begin(), paths.end(), [](const std::string& p) {
    return p.find("/api/models/org/tiny-llama/revision/") != std::string::npos;
  }));
}

TEST(HubGuardTest, RemembersAnOutageBacksOffAndProbesOnce) {
  HubGuard guard({.first_backoff_ms = 1000, .max_backoff_ms = 3000});
  const auto t0 = Clock::now();
  const std::string hub = "https://huggingface.co";
  EXPECT_FALSE(guard.Blocked(hub, t0));
  guard.RecordOutage(hub, Error{"cannot reach huggingface.co"}, t0);
  auto blocked = guard.Blocked(hub, t0 + milliseconds(400));
  ASSERT_TRUE(blocked);
  EXPECT_EQ(blocked->message, "cannot reach huggingface.co") << "the remembered error, word for word";
  EXPECT_FALSE(guard.Blocked("http://127.0.0.1:9", t0)) << "another endpoint is not affected";
  // The window ends: one lookup probes, the others still fail fast until it is answered.
  EXPECT_FALSE(guard.Blocked(hub, t0 + milliseconds(1000)));
  EXPECT_TRUE(guard.Blocked(hub, t0 + milliseconds(1001)));
  // The probe fails: the window doubles (2 s), then is capped (3 s).
  guard.RecordOutage(hub, Error{"timed out"}, t0 + milliseconds(1100));
  EXPECT_TRUE(guard.Blocked(hub, t0 + milliseconds(3099)));
  EXPECT_FALSE(guard.Blocked(hub, t0 + milliseconds(3100)));
  guard.RecordOutage(hub, Error{"timed out"}, t0 + milliseconds(3200));
  EXPECT_TRUE(guard.Blocked(hub, t0 + milliseconds(6199)));
  EXPECT_FALSE(guard.Blocked(hub, t0 + milliseconds(6200)));
  // An answer (any status) forgets the outage.
  guard.RecordAnswer(hub);
  EXPECT_FALSE(guard.Blocked(hub, t0 + milliseconds(6201)));
  EXPECT_FALSE(guard.Blocked(hub, t0 + milliseconds(6202)));
}

TEST(HubGuardTest, ConcurrentLookupsOfOneKeyShareOneRun) {
  HubGuard guard;
  std::atomic<int> runs{0};
  std::atomic<int> shared_count{0};
  std::atomic<bool> release{false};
  auto work = [&] {
    ++runs;
    while (!release) std::this_thread::sleep_for(milliseconds(1));
    return HubOutcome{MakeError("org/x: gated"), HubFailure::kOther};
  };
  std::vector<std::thread> threads;
  std::vector<HubOutcome> outcomes(6, HubOutcome{MakeError(""), HubFailure::kNone});
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      bool shared = false;
      outcomes[i] = guard.Shared("org/x", work, &shared);
      if (shared) ++shared_count;
    });
  }
  // Followers join while the leader runs; release it once all six have asked (or after 2 s).
  for (int i = 0; i < 2000 && runs.load() == 0; ++i) std::this_thread::sleep_for(milliseconds(1));
  std::this_thread::sleep_for(milliseconds(100));
  release = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(runs.load() + shared_count.load(), 6);
  EXPECT_LT(runs.load(), 6) << "no lookup was shared";
  for (const auto& o : outcomes) {
    ASSERT_FALSE(o.result);
    EXPECT_EQ(o.result.error().message, "org/x: gated");
    EXPECT_EQ(o.failure, HubFailure::kOther);
  }
  // A later lookup of the same key runs again (nothing is cached by the guard).
  bool shared = true;
  release = true;
  guard.Shared("org/x", work, &shared);
  EXPECT_FALSE(shared);
}

TEST(HubGuardTest, AStalledHubCostsOneTimeoutNotOnePerLookup) {
  FakeHub hub;
  hub.AddRepo(TinyLlamaRepo());
  HubGuard guard({.first_backoff_ms = 60'000});
  HubSettings s = TestSettings(hub);
  s.guard = &guard;
  s.metadata_timeout_ms = 100;
  s.max_attempts = 1;
  hub.stall_ms = 400;
  HubFailure failure = HubFailure::kNone;
  auto first = Resolve(s, &failure);
  ASSERT_FALSE(first);
  EXPECT_NE(first.error().message.find("timed out after 100 ms"), std::string::npos)
      << first.error().message;
  EXPECT_EQ(failure, HubFailure::kUnreachable);
  const size_t asked = InfoRequests(hub);
  EXPECT_EQ(asked, 1u);
  for (int i = 0; i < 5; ++i) {
    failure = HubFailure::kNone;
    auto again = Resolve(s, &failure);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().message, first.error().message);
    EXPECT_EQ(failure, HubFailure::kUnreachable);
  }
  EXPECT_EQ(InfoRequests(hub), asked) << "the remembered outage must not ask the Hub again";
  // The Hub is back and the memory is cleared: the lookup succeeds and asks once more.
  hub.stall_ms = 0;
  guard.Clear();
  // A generous timeout now: on a loaded machine an answer can take more than the 100 ms the
  // stall needed (this lookup failed now and then under ctest -j2).
  s.metadata_timeout_ms = 10'000;
  auto back = Resolve(s, &failure);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(InfoRequests(hub), asked + 1);
  // An HTTP error is an answer, not an outage: nothing is remembered.
  auto missing = ParseHubRef("org/missing", s.endpoint);
  ASSERT_TRUE(missing);
  HubStats stats;
  EXPECT_FALSE(ResolveHubModel(*missing, {}, s, stats));
  EXPECT_FALSE(guard.Blocked(s.endpoint));
}

TEST(HubGuardTest, ConcurrentLookupsOfOneModelSendOneSetOfRequests) {
  FakeHub hub;
  hub.AddRepo(TinyLlamaRepo());
  hub.latency_ms = 50;  // every answer takes a while: the lookups overlap
  HubGuard guard;
  HubSettings s = TestSettings(hub);
  s.guard = &guard;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      if (Resolve(s)) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
  // Threads that arrived after the first lookup ended read memfit's cache instead (no request):
  // either way the Hub's API saw one lookup.
  EXPECT_EQ(InfoRequests(hub), 1u);
}

TEST(HubGuardTest, TheLookupDeadlineBoundsRetriesAndTimeouts) {
  FakeHub hub;
  hub.AddRepo(TinyLlamaRepo());
  HubSettings s = TestSettings(hub);
  s.metadata_timeout_ms = 10'000;
  s.max_attempts = 5;
  s.deadline_ms = 150;
  hub.stall_ms = 2'000;
  HubFailure failure = HubFailure::kNone;
  auto late = Resolve(s, &failure);
  ASSERT_FALSE(late);
  EXPECT_NE(late.error().message.find("no answer within the lookup's deadline of 150 ms"),
            std::string::npos)
      << late.error().message;
  EXPECT_EQ(failure, HubFailure::kUnreachable);
  EXPECT_EQ(InfoRequests(hub), 1u) << "no retry after the deadline";
}

TEST(HubGuardTest, TheEnvironmentSetsTheDeadlineAndTheProcessGuard) {
  testing::ScopedEnv env;
  env.Set("MEMFIT_HUB_DEADLINE", "2.5");
  HubSettings s = HubSettingsFromEnvironment();
  EXPECT_EQ(s.deadline_ms, 2500u);
  EXPECT_EQ(s.guard, &DefaultHubGuard());
  env.Set("MEMFIT_HUB_DEADLINE", "0");
  EXPECT_EQ(HubSettingsFromEnvironment().deadline_ms, 0u);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
