// The library's model resolution: errors say what kind of failure they are (not found, gated,
// Hub unavailable), so the server's status and the CLI's message never depend on the wording.

#include "memfit/resolve.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "hub_cli_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)
using testing::FakeHub;
using testing::ScopedEnv;

TEST(ResolveModelTest, ErrorKindsFromLocalLookupsAndTheHub) {
  FakeHub hub;
  testing::FakeRepo gated = testing::TinyLlamaRepo("org/gated");
  gated.gated = true;
  hub.AddRepo(gated);
  hub.AddRepo(testing::TinyLlamaRepo("org/open"));
  ScopedEnv env;
  testing::PointAt(env, hub.endpoint());

  auto ok = ResolveModel({.spec = "org/open"});
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->hub_repo_id, "org/open");
  EXPECT_TRUE(ok->inputs.config.has_value());

  auto missing = ResolveModel({.spec = "org/does-not-exist"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound) << missing.error().message;
  // A variant of a catalog model is pointed at the model it extends (the longest id), not at
  // the nearest spelling ("Qwen/Qwen3-VL-2B-Instruct" is fewer edits from the -Instruct name).
  auto variant = ResolveModel({.spec = "Qwen/Qwen2.5-7B-Instruct"});
  ASSERT_FALSE(variant);
  EXPECT_NE(variant.error().message.find("did you mean Qwen/Qwen2.5-7B? it is in memfit's catalog, "
                                         "and this name extends it"),
            std::string::npos)
      << variant.error().message;
  auto short_name = ResolveModel({.spec = "llama-3.1-8b-instruct"});
  ASSERT_FALSE(short_name);
  EXPECT_NE(short_name.error().message.find("did you mean meta-llama/Llama-3.1-8B?"),
            std::string::npos)
      << short_name.error().message;

  auto no_token = ResolveModel({.spec = "org/gated"});
  ASSERT_FALSE(no_token);
  EXPECT_EQ(no_token.error().kind, ErrorKind::kForbidden) << no_token.error().message;
  auto with_token = ResolveModel({.spec = "org/gated", .token = FakeHub::kToken});
  EXPECT_TRUE(with_token) << with_token.error().message;

  auto offline = ResolveModel({.spec = "org/never-fetched", .offline = true});
  ASSERT_FALSE(offline);
  EXPECT_EQ(offline.error().kind, ErrorKind::kUnavailable) << offline.error().message;

  auto local = ResolveModel({.spec = "./no/such/dir"});
  ASSERT_FALSE(local);
  EXPECT_EQ(local.error().kind, ErrorKind::kNotFound) << local.error().message;
}

TEST(ResolveModelTest, CallbacksInsteadOfPrinting) {
  FakeHub hub;
  hub.AddRepo(testing::TinyLlamaRepo("org/open"));
  ScopedEnv env;
  testing::PointAt(env, hub.endpoint());
  std::string summary;
  auto ok = ResolveModel({.spec = "org/open", .summary = [&](const std::string& s) { summary = s; }});
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_TRUE(summary.starts_with("hub: ")) << summary;
  // The catalog needs no Hub: no summary line.
  summary.clear();
  auto catalog = ResolveModel({.spec = "google-bert/bert-base-uncased", .offline = true,
                               .summary = [&](const std::string& s) { summary = s; }});
  ASSERT_TRUE(catalog) << catalog.error().message;
  EXPECT_EQ(summary, "");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
