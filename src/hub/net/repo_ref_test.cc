#include <cstdlib>

#include <gtest/gtest.h>

#include "hub/net/hub_cache.h"
#include "memfit/hub.h"
#include "hub_fixtures.h"
#include "test_support.h"

namespace memfit {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(HubRefTest, ParsesIdsAndUrls) {
  // What each reference must parse to; a field left null is not checked.
  struct Case {
    const char* ref;
    const char* endpoint;
    const char* repo_id;
    const char* revision;
    const char* file;
  };
  const std::string hf = "https://huggingface.co";
  const Case cases[] = {
      {"org/name", hf.c_str(), "org/name", "", nullptr},
      {"https://huggingface.co/org/name", hf.c_str(), "org/name", nullptr, nullptr},
      {"https://huggingface.co/org/name/tree/refs%2Fpr%2F1", hf.c_str(), nullptr, "refs/pr/1",
       nullptr},
      {"https://hf.co/org/name/blob/main/q4/model-Q4_K_M.gguf?download=true", hf.c_str(), nullptr,
       "main", "q4/model-Q4_K_M.gguf"},
      {"https://huggingface.co/gpt2/tree/v1", hf.c_str(), "gpt2", "v1", nullptr},
      {"http://127.0.0.1:8080/org/name/", "http://127.0.0.1:8080", "org/name", nullptr, nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.ref);
    auto ref = ParseHubRef(c.ref, c.endpoint);
    ASSERT_TRUE(ref) << ref.error().message;
    if (c.repo_id) {
      EXPECT_EQ(ref->repo_id, c.repo_id);
    }
    if (c.revision) {
      EXPECT_EQ(ref->revision, c.revision);
    }
    if (c.file) {
      EXPECT_EQ(ref->file, c.file);
    }
  }
}

TEST(HubRefTest, RejectsWhatIsNotAModelRepo) {
  const std::string ep = "https://huggingface.co";
  EXPECT_FALSE(ParseHubRef("https://example.com/org/name", ep));
  EXPECT_FALSE(ParseHubRef("https://huggingface.co/datasets/org/data", ep));
  EXPECT_FALSE(ParseHubRef("https://huggingface.co/org/name/tree/..", ep));
  EXPECT_FALSE(ParseHubRef("https://huggingface.co/org/name/discussions", ep));
  EXPECT_FALSE(ParseHubRef("https://huggingface.co/org/name/tree/%zz", ep));
  EXPECT_FALSE(ParseHubRef("org/../x", ep));
  EXPECT_FALSE(ParseHubRef("a/b/c", ep));
}

TEST(HubRefTest, PercentEncodesRevisionAsOneSegment) {
  EXPECT_EQ(PercentEncodeSegment("refs/pr/1"), "refs%2Fpr%2F1");
  EXPECT_EQ(PercentEncodeSegment("v1.0-rc_2~x"), "v1.0-rc_2~x");
  EXPECT_EQ(PercentEncodeSegment("a b+c"), "a%20b%2Bc");
  EXPECT_EQ(PercentEncodePath("unet/diffusion model.safetensors"), "unet/diffusion%20model.safetensors");
}

TEST(HubRefTest, ValidatesRevisions) {
  EXPECT_TRUE(ValidateRevision("main"));
  EXPECT_TRUE(ValidateRevision("refs/pr/12"));
  EXPECT_FALSE(ValidateRevision(""));
  EXPECT_FALSE(ValidateRevision("../../etc"));
  EXPECT_FALSE(ValidateRevision("a//b"));
  EXPECT_FALSE(ValidateRevision("/abs"));
}

using testing::ScopedEnv;

TEST(HubSettingsTest, ReadsTheEnvironmentLikeHuggingfaceHub) {
  ScopedEnv env;
  const std::string home = testing::TempDir();
  env.Set("HF_HOME", home.c_str());
  env.Set("HF_HUB_CACHE", nullptr);
  env.Set("HUGGINGFACE_HUB_CACHE", nullptr);
  env.Set("HF_ENDPOINT", "http://mirror.example//");
  env.Set("HF_TOKEN", nullptr);
  env.Set("HUGGING_FACE_HUB_TOKEN", nullptr);
  env.Set("HF_TOKEN_PATH", nullptr);
  env.Set("HF_HUB_DISABLE_IMPLICIT_TOKEN", nullptr);
  env.Set("HF_HUB_OFFLINE", "yes");
  env.Set("HF_HUB_ETAG_TIMEOUT", "2.5");
  env.Set("HF_HUB_DOWNLOAD_TIMEOUT", "nonsense");
  env.Set("MEMFIT_CACHE", "/tmp/memfit-cache-x");
  testing::WriteFiles(home, {{"token", "  hf_fromfile\n"}});
  HubSettings s = HubSettingsFromEnvironment();
  EXPECT_EQ(s.endpoint, "http://mirror.example");
  EXPECT_EQ(s.hub_cache, home + "/hub");
  EXPECT_EQ(s.token, "hf_fromfile");  // $HF_HOME/token, trimmed
  EXPECT_TRUE(s.offline);
  EXPECT_EQ(s.metadata_timeout_ms, 2500u);
  EXPECT_EQ(s.download_timeout_ms, 10'000u);  // malformed: the default
  EXPECT_EQ(s.memfit_cache, "/tmp/memfit-cache-x");

  env.Set("HF_TOKEN", "hf_fromenv");
  EXPECT_EQ(HubSettingsFromEnvironment().token, "hf_fromenv");
  EXPECT_EQ(HubSettingsFromEnvironment("hf_explicit").token, "hf_explicit");
  env.Set("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1");
  EXPECT_EQ(HubSettingsFromEnvironment().token, "");
  EXPECT_EQ(HubSettingsFromEnvironment("hf_explicit").token, "hf_explicit");
  env.Set("HF_HUB_DISABLE_IMPLICIT_TOKEN", nullptr);
  env.Set("HF_TOKEN", nullptr);
  const std::string other = testing::TempDir() + "/tok";
  env.Set("HF_TOKEN_PATH", other.c_str());
  EXPECT_EQ(HubSettingsFromEnvironment().token, "");  // the path wins over $HF_HOME/token
  env.Set("HF_HUB_OFFLINE", "0");
  env.Set("TRANSFORMERS_OFFLINE", nullptr);
  EXPECT_FALSE(HubSettingsFromEnvironment().offline);
  EXPECT_TRUE(HubSettingsFromEnvironment("", true).offline);
}

TEST(HubCacheTest, SafePathsAndObjectIds) {
  EXPECT_TRUE(hubnet::IsSafeRepoPath("unet/config.json"));
  EXPECT_FALSE(hubnet::IsSafeRepoPath("../x"));
  EXPECT_FALSE(hubnet::IsSafeRepoPath("/etc/passwd"));
  EXPECT_FALSE(hubnet::IsSafeRepoPath("a/./b"));
  EXPECT_TRUE(hubnet::IsObjectId(std::string(40, 'a')));
  EXPECT_FALSE(hubnet::IsObjectId(std::string(40, 'A')));
  EXPECT_FALSE(hubnet::IsObjectId("../../x"));
  EXPECT_EQ(hubnet::RepoFolderName("org/name"), "models--org--name");
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit
