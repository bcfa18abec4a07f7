#pragma once
// What the tests of the Hub client against the fake Hub (tests/fake_hub.h) share: a fixture
// holding the fake Hub, settings that reach it with fresh caches and the run's stats, and Resolve.

#include <string>

#include <gtest/gtest.h>

#include "hub_fixtures.h"  // tests/: FakeHub, TestSettings
#include "memfit/hub.h"

namespace memfit::testing {

// Resolves `id` (a repository id or a Hub URL) with `s`.
inline Result<HubResolution> Resolve(const HubSettings& s, HubStats& stats,
                                     const std::string& id = "org/tiny-llama",
                                     HubResolveOptions options = {},
                                     HubFailure* failure = nullptr) {
  auto ref = ParseHubRef(id, s.endpoint);
  if (!ref) return ref.error();
  return ResolveHubModel(*ref, options, s, stats, failure);
}

// A test against a fake Hub: `hub`, with no repository until the test adds some; `s`, settings
// that reach it with fresh, empty caches; `stats`, for the test's runs.
class FakeHubTest : public ::testing::Test {
 protected:
  FakeHub hub;
  HubSettings s = TestSettings(hub);
  HubStats stats;
};

}  // namespace memfit::testing
