// HTTP answers taken apart without a server: header lines, ranged and capped bodies, and the
// errors the Hub's X-Error-Code values become.

#include "hub/net/http_response.h"

#include <gtest/gtest.h>

#include "base/error_test_util.h"

namespace memfit::hubnet {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

using Headers = std::map<std::string, std::string>;

TEST(HttpResponseTest, HeaderLines) {
  Headers h;
  AddHeaderLine("HTTP/1.1 302 Found\r\n", h);
  AddHeaderLine("Location: https://cdn.example/x?sig=1\r\n", h);
  AddHeaderLine("X-Linked-Size:   1234 \r\n", h);
  AddHeaderLine("no colon here\r\n", h);
  AddHeaderLine("\r\n", h);
  EXPECT_EQ(h, (Headers{{"location", "https://cdn.example/x?sig=1"}, {"x-linked-size", "1234"}}));
  // The next answer (after the redirect) starts afresh; a repeated name keeps the last value.
  AddHeaderLine("HTTP/2 206\r\n", h);
  AddHeaderLine("content-range: bytes 0-9/100\r\n", h);
  AddHeaderLine("Content-Range: bytes 0-9/200\r\n", h);
  EXPECT_EQ(h, (Headers{{"content-range", "bytes 0-9/200"}}));
}

TEST(HttpResponseTest, RangedAnswers) {
  const HttpRequest ranged{.url = "https://cdn/x?sig=secret", .range = std::make_pair(4, 7)};
  // 206 holding the range asked for.
  auto ok = FinishResponse(ranged, ranged.url, 206, {{"content-range", "bytes 4-7/100"}}, {},
                           "abcd", false);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->body, "abcd");
  EXPECT_EQ(ok->total_size, 100u);
  // 206 from another offset: those bytes would be read as the ones asked for.
  auto shifted = FinishResponse(ranged, ranged.url, 206, {{"content-range", "bytes 0-3/100"}}, {},
                                "abcd", false);
  ASSERT_FALSE(shifted);
  EXPECT_NE(shifted.error().message.find("answered a range from byte 4"), std::string::npos);
  EXPECT_EQ(shifted.error().message.find("secret"), std::string::npos);  // signature redacted
  EXPECT_FALSE(FinishResponse(ranged, ranged.url, 206, {}, {}, "abcd", false));
  // 200: the server ignored Range and sent the file from byte 0 (cut at byte 7 by the client).
  auto full = FinishResponse(ranged, ranged.url, 200, {{"content-length", "100"}}, {}, "01234567",
                             true);
  ASSERT_TRUE(full);
  EXPECT_EQ(full->body, "4567");
  EXPECT_EQ(full->total_size, 100u);
  auto short_full = FinishResponse(ranged, ranged.url, 200, {}, {}, "012", false);
  ASSERT_TRUE(short_full);
  EXPECT_EQ(short_full->body, "");
  // No size in the final answer: the Hub's X-Linked-Size from the first one.
  auto linked = FinishResponse(ranged, ranged.url, 206, {{"content-range", "bytes 4-7/*"}},
                               {{"x-linked-size", "555"}}, "abcd", false);
  ASSERT_TRUE(linked);
  EXPECT_EQ(linked->total_size, 555u);
}

TEST(HttpResponseTest, UnrangedAnswers) {
  const HttpRequest plain{.url = "https://hub/api/models/a/b", .max_body_bytes = 10};
  auto ok = FinishResponse(plain, plain.url, 200, {{"content-length", "2"}}, {}, "{}", false);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->total_size, 2u);
  auto capped = FinishResponse(plain, plain.url, 200, {}, {}, std::string(11, 'x'), true);
  testing::ExpectErrorContains(capped, "larger than 10 bytes");
  auto odd = FinishResponse(plain, plain.url, 200, {{"content-length", "-5"}}, {}, "{}", false);
  ASSERT_TRUE(odd);
  EXPECT_FALSE(odd->total_size);
}

TEST(HttpResponseTest, StatusErrorsFollowXErrorCode) {
  const ErrorContext ctx{.repo_id = "org/name", .revision = "main", .file = "config.json"};
  auto message = [&](long status, Headers h, bool token) {
    return HubStatusError(status, h, ctx, "https://huggingface.co", token, "https://hub/x").message;
  };
  EXPECT_EQ(message(403, {{"x-error-code", "GatedRepo"}}, false),
            "org/name is gated: accept its terms at https://huggingface.co/org/name and use a token "
            "of that account (no token was sent: pass --token or set HF_TOKEN) (HTTP 403)");
  EXPECT_NE(message(401, {}, true).find("repository not found on https://huggingface.co, or "
                                        "private (the token sent does not grant access)"),
            std::string::npos);
  EXPECT_NE(message(404, {{"x-error-code", "RepoNotFound"}}, false).find("repository not found"),
            std::string::npos);
  EXPECT_EQ(message(404, {{"x-error-code", "RevisionNotFound"}}, false),
            "org/name: revision \"main\" not found (HTTP 404)");
  EXPECT_EQ(message(404, {{"x-error-code", "EntryNotFound"}}, false),
            "org/name: file config.json not found at revision \"main\" (HTTP 404)");
  EXPECT_EQ(message(404, {}, false), "https://hub/x: not found (HTTP 404)");
  // The server's message is shown, on one line.
  EXPECT_EQ(message(403, {{"x-error-message", "no\r\nway"}}, false),
            "https://hub/x: forbidden (HTTP 403): no  way");
  EXPECT_EQ(message(418, {}, false), "https://hub/x: HTTP 418");
  EXPECT_TRUE(IsRetryableStatus(429));
  EXPECT_TRUE(IsRetryableStatus(503));
  EXPECT_FALSE(IsRetryableStatus(501));
  EXPECT_FALSE(IsRetryableStatus(404));
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::hubnet
