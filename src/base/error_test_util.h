#pragma once
// Test helper: expect a failed Result whose message names what is wrong.

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace memfit::testing {

// Expects `result` (a Result<T>) to hold an error whose message contains `needle`; a failure
// prints the message, the needle and the calling line.
// The calling line comes from __builtin_FILE/__builtin_LINE: clang 14 with libstdc++ 12 (the
// sanitizer build) has no std::source_location.
template <typename R>
void ExpectErrorContains(const R& result, std::string_view needle,
                         const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::testing::ScopedTrace trace(file, line, "an error containing \"" + std::string(needle) + "\"");
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find(needle), std::string::npos) << result.error().message;
}

}  // namespace memfit::testing
