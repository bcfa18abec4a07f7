// What the Hub loader prints on stderr: the progress line only on a terminal, then one summary
// line of requests and bytes; never the token.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "cli/model_loader.h"
#include "hub_cli_support.h"

namespace memfit::cli {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)
using memfit::testing::FakeHub;
using memfit::testing::ScopedEnv;

testing::FakeRepo FiveShards() {
  testing::FakeRepo repo = testing::TinyLlamaRepo("org/five");
  repo.gated = true;
  repo.files.erase("model.safetensors.index.json");
  repo.files.erase("model-00001-of-00002.safetensors");
  repo.files.erase("model-00002-of-00002.safetensors");
  for (int i = 1; i <= 5; ++i) {
    repo.files[fmt::format("w{}.safetensors", i)] =
        testing::MakeSafetensors({{fmt::format("t{}", i), "F32", {4}}});
  }
  return repo;
}

TEST(HubLoaderTest, ProgressOnATerminalOnlyAndOneSummaryLine) {
  FakeHub hub;
  hub.AddRepo(FiveShards());
  ScopedEnv env;
  testing::PointAt(env, hub.endpoint());
  std::ostringstream terminal, pipe, cached;
  ModelArgs args{.spec = "org/five",
                 .token = FakeHub::kToken,
                 .gguf_file = "",
                 .log = &terminal,
                 .log_is_terminal = true};
  auto first = LoadHubModelInputs(args, std::getenv("HF_HUB_CACHE"));
  ASSERT_TRUE(first) << first.error().message;
  const std::string t = terminal.str();
  EXPECT_TRUE(t.starts_with("\rmemfit: reading weight headers 1/5")) << t;
  // Info, tree, config.json, then a redirect and a CDN range per shard.
  EXPECT_NE(t.find("\rmemfit: reading weight headers 5/5\nmemfit: hub: 13 requests (0 retries), "),
            std::string::npos)
      << t;
  EXPECT_NE(t.find(", 5 weight headers fetched, 0 from cache, "), std::string::npos) << t;
  EXPECT_TRUE(t.ends_with(" s\n")) << t;
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 2) << t;

  // Not a terminal (a pipe, a log file): the summary line alone. Second run: nothing sent.
  args.log = &pipe;
  args.log_is_terminal = false;
  ASSERT_TRUE(LoadHubModelInputs(args, std::getenv("HF_HUB_CACHE")));
  const std::string p = pipe.str();
  EXPECT_TRUE(
      p.starts_with("memfit: hub: 0 requests (0 retries), 0 B received, 0 weight headers "
                    "fetched, 5 from cache, "))
      << p;
  EXPECT_EQ(std::count(p.begin(), p.end(), '\n'), 1) << p;
  EXPECT_EQ(p.find('\r'), std::string::npos) << p;
  for (const std::string& s : {t, p}) EXPECT_EQ(s.find(FakeHub::kToken), std::string::npos);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::cli
