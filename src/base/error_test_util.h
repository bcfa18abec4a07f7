#pragma once
// Test helper: expect a failed Result whose message names what is wrong.

#include <source_location>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace memfit::testing {

// Expects `result` (a Result<T>) to hold an error whose message contains `needle`; a failure
// prints the message, the needle and the calling line.
template <typename R>
void ExpectErrorContains(const R& result, std::string_view needle,
                         std::source_location where = std::source_location::current()) {
  ::testing::ScopedTrace trace(where.file_name(), static_cast<int>(where.line()),
                               "an error containing \"" + std::string(needle) + "\"");
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find(needle), std::string::npos) << result.error().message;
}

}  // namespace memfit::testing
