// `memfit serve` (cli/serve_command.cc): its flags' ranges and a bind error as one line. (The
// server itself is tested in src/server/ and by the load bench; listening would block here.)

#include <gtest/gtest.h>

#include "cli/command_test_util.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using cli_test::RunMemfit;

TEST(ServeCommandTest, FlagRangesAreOneLineErrors) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"serve", "--port", "65536"},
        std::vector<std::string>{"serve", "--workers", "0"},
        std::vector<std::string>{"serve", "--max-connections", "0"},
        std::vector<std::string>{"serve", "--max-connections-per-address", "0"}}) {
    auto r = RunMemfit(args);
    EXPECT_EQ(r.code, 1) << args[1];
    EXPECT_NE(r.err.find(args[1]), std::string::npos) << r.err;
  }
}

TEST(ServeCommandTest, AHostThatIsNotAnAddressFailsBeforeListening) {
  testing::ScopedEnv env;
  env.Set("MEMFIT_HUB_DEADLINE", nullptr);  // serve sets it for its workers; restored after
  auto r = RunMemfit({"serve", "--host", "localhost.invalid", "--port", "0"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "memfit: error: serve: localhost.invalid is not an IP address\n");
  // The Hub deadline a server's requests get (docs/hub.md), unless the user set one.
  const char* deadline = std::getenv("MEMFIT_HUB_DEADLINE");
  ASSERT_NE(deadline, nullptr);
  EXPECT_STREQ(deadline, "5");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
