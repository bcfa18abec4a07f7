#include "server/request_target.h"

#include <gtest/gtest.h>

namespace memfit::server {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(RequestTarget, DecodesThePathAndTheQuery) {
  auto t = ParseRequestTarget("/api/v1/models?family=llama+3&vendor=a%26b&flag&=x&&");
  EXPECT_EQ(t.path, "/api/v1/models");
  std::multimap<std::string, std::string> expected = {
      {"family", "llama 3"}, {"vendor", "a&b"}, {"flag", ""}, {"", "x"}};
  EXPECT_EQ(t.params, expected);
  // '+' is a space in a query only; "%2e%2e" decodes (the router serves exact names only).
  EXPECT_EQ(ParseRequestTarget("/a+b/%2e%2e/%2F%20").path, "/a+b/..// ");
  EXPECT_EQ(ParseRequestTarget("/x?k=1&k=2").params.count("k"), 2u);
}

TEST(RequestTarget, KeepsBrokenEscapes) {
  EXPECT_EQ(PercentDecode("%", false), "%");
  EXPECT_EQ(PercentDecode("%4", false), "%4");
  EXPECT_EQ(PercentDecode("%zz%41", false), "%zzA");
  EXPECT_EQ(PercentDecode("%FF%00", false), std::string("\xff\0", 2));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::server
