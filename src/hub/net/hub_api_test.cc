// Parsing the Hub's API answers: the shapes the real Hub sends, and hostile ones.

#include "hub/net/hub_api.h"

#include <gtest/gtest.h>

namespace memfit::hubnet {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

TEST(HubApiTest, ModelInfoSha) {
  auto sha = ParseModelInfoSha(
      R"({"_id": "x", "id": "org/name", "sha": "0123456789abcdef0123456789abcdef01234567",
          "siblings": [{"rfilename": "config.json"}]})",
      "u");
  ASSERT_TRUE(sha) << sha.error().message;
  EXPECT_EQ(*sha, "0123456789abcdef0123456789abcdef01234567");
  for (const char* bad :
       {R"({})", R"([])", R"({"sha": 3})", R"({"sha": "main"})",
        R"({"sha": "0123456789ABCDEF0123456789abcdef01234567"})",
        R"({"sha": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"})",
        "not json"}) {
    EXPECT_FALSE(ParseModelInfoSha(bad, "u")) << bad;
  }
}

TEST(HubApiTest, TreePage) {
  // As /api/models/{id}/tree/{rev}?recursive=true answers: directories, small files, LFS files.
  auto files = ParseTreePage(
      R"([{"type": "directory", "oid": "aa", "size": 0, "path": "unet"},
          {"type": "file", "oid": "1111111111111111111111111111111111111111", "size": 652, "path": "config.json"},
          {"type": "file", "oid": "2222222222222222222222222222222222222222", "size": 4968243304,
           "path": "unet/model.safetensors",
           "lfs": {"oid": "3333333333333333333333333333333333333333333333333333333333333333",
                   "size": 4968243304, "pointerSize": 135},
           "xetHash": "ffff"}])",
      "u");
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, "config.json");
  EXPECT_EQ((*files)[0].etag, "1111111111111111111111111111111111111111");
  EXPECT_FALSE((*files)[0].lfs);
  EXPECT_EQ((*files)[1].size, 4968243304u);
  EXPECT_EQ((*files)[1].etag, "3333333333333333333333333333333333333333333333333333333333333333");
  EXPECT_TRUE((*files)[1].lfs);
  for (const char* bad : {R"({})", R"([{"path": "x"}])", R"([{"type": "file", "path": "x"}])",
                          R"([{"type": "file", "path": "../x", "size": 1, "oid": "a"}])",
                          R"([{"type": "file", "path": "/etc/passwd", "size": 1, "oid": "a"}])",
                          R"([{"type": "file", "path": "a//b", "size": 1, "oid": "a"}])",
                          R"([{"type": "file", "path": "x", "size": -1, "oid": "a"}])",
                          R"([{"type": "file", "path": "x", "size": 1.5, "oid": "a"}])"}) {
    EXPECT_FALSE(ParseTreePage(bad, "u")) << bad;
  }
  auto newline =
      ParseTreePage(R"([{"type": "file", "path": "a\nb/../c", "size": 1, "oid": "a"}])", "u");
  ASSERT_FALSE(newline);
  EXPECT_EQ(newline.error().message.find('\n'), std::string::npos);
}

TEST(HubApiTest, NextPageLink) {
  EXPECT_EQ(
      NextPageLink(R"(<https://huggingface.co/api/models/x/tree/main?cursor=abc>; rel="next")"),
      "https://huggingface.co/api/models/x/tree/main?cursor=abc");
  EXPECT_EQ(NextPageLink(R"(<https://h/a?p=1>; rel="prev", <https://h/a?p=3>; rel="next")"),
            "https://h/a?p=3");
  EXPECT_EQ(NextPageLink(R"(<https://h/a?c=x,y>; rel=next)"), "https://h/a?c=x,y");
  EXPECT_EQ(NextPageLink(R"(<https://h/a>; REL="last next")"), "https://h/a");
  EXPECT_EQ(NextPageLink(R"(<https://h/a>; rel="nextpage")"), "");
  EXPECT_EQ(NextPageLink(R"(<https://h/a>; title="next")"), "");
  EXPECT_EQ(NextPageLink(""), "");
  EXPECT_EQ(NextPageLink("<unterminated; rel=\"next\""), "");
  EXPECT_EQ(NextPageLink(R"(>; rel="next" <)"), "");
}

TEST(HubApiTest, ContentRange) {
  auto r = ParseContentRange("bytes 0-131071/4968243304");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r->first, 0u);
  EXPECT_EQ(*r->last, 131071u);
  EXPECT_EQ(*r->total, 4968243304u);
  auto unsatisfied = ParseContentRange("bytes */100");
  ASSERT_TRUE(unsatisfied);
  EXPECT_FALSE(unsatisfied->first);
  EXPECT_EQ(*unsatisfied->total, 100u);
  auto unknown_total = ParseContentRange("bytes 5-9/*");
  ASSERT_TRUE(unknown_total);
  EXPECT_FALSE(unknown_total->total);
  for (const char* bad :
       {"", "bytes", "bytes 0-1", "items 0-1/2", "bytes 9-5/10", "bytes 0-10/10", "bytes -1-5/10",
        "bytes */*", "bytes 0-99999999999999999999/1", "bytes 0-1/18446744073709551616"}) {
    EXPECT_FALSE(ParseContentRange(bad)) << bad;
  }
}

TEST(HubApiTest, DecimalU64) {
  EXPECT_EQ(ParseDecimalU64("0"), 0u);
  EXPECT_EQ(ParseDecimalU64("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(ParseDecimalU64("18446744073709551616"));
  EXPECT_FALSE(ParseDecimalU64(""));
  EXPECT_FALSE(ParseDecimalU64("+1"));
  EXPECT_FALSE(ParseDecimalU64(" 1"));
  EXPECT_FALSE(ParseDecimalU64("1e3"));
}

TEST(HubApiTest, PathsAndObjectIds) {
  EXPECT_TRUE(IsSafeRepoPath("unet/diffusion_pytorch_model.safetensors"));
  for (const char* bad : {"", "/a", "a/", "a//b", "./a", "a/../b", "..", "a\\b"}) {
    EXPECT_FALSE(IsSafeRepoPath(bad)) << bad;
  }
  EXPECT_FALSE(IsSafeRepoPath(std::string("a\0b", 3)));
  EXPECT_TRUE(IsObjectId(std::string(40, 'a')));
  EXPECT_TRUE(IsObjectId(std::string(64, '0')));
  EXPECT_FALSE(IsObjectId(std::string(40, 'A')));
  EXPECT_FALSE(IsObjectId(std::string(41, 'a')));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::hubnet
