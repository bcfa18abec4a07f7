// The router without a socket (server/router.h): hostile requests found by
// fuzz/server_request_fuzz.cc or while writing it, each with its request built here. The
// end-to-end tests over HTTP are in server_test.cc.

#include "server/router.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "hub_fixtures.h"
#include "memfit/local_source.h"
#include "api/body.h"
#include "api/request_json.h"
#include "test_support.h"

namespace memfit::server {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

HttpResponse Post(Router& router, std::string path, std::string body,
                  std::string authorization = "") {
  return router.Handle({.method = "POST",
                        .path = std::move(path),
                        .params = {},
                        .authorization = std::move(authorization),
                        .body = std::move(body)});
}

HttpResponse Get(Router& router, std::string path) {
  return router.Handle(
      {.method = "GET", .path = std::move(path), .params = {}, .authorization = "", .body = ""});
}

// {"error": "<one line>"} with `status`, containing `fragment`.
void ExpectError(const HttpResponse& r, int status, const std::string& fragment) {
  EXPECT_EQ(r.status, status) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  ASSERT_TRUE(j.is_object() && j.size() == 1 && j["error"].is_string()) << r.body;
  const std::string message = j["error"];
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
  EXPECT_EQ(message.find_first_of("\r\n"), std::string::npos) << message;
}

TEST(Router, OptionsHiddenInValuesNeverReachTheCli) {
  // {"model": "--export-configs=/tmp/x"} became the argument vector [models,
  // --export-configs=/tmp/x, --format, json]: CLI11 parsed the "model" as the option and the
  // server wrote every catalog config under /tmp/x. {"model": "--help"} and {"help": true}
  // answered 200 with the help text instead of JSON.
  Router router(ServerOptions{});
  const std::string dir = testing::TempDir() + "/exported";
  ExpectError(Post(router, "/api/v1/models", R"({"model": "--export-configs=)" + dir + R"("})"),
              400, "must not start with '-'");
  EXPECT_FALSE(std::filesystem::exists(dir));
  ExpectError(Post(router, "/api/v1/estimate-memory", R"({"model": "--help"})"), 400,
              "must not start with '-'");
  ExpectError(
      Post(router, "/api/v1/estimate-memory", R"({"model": "bert-base-cased", "help": true})"), 400,
      "option \"help\" is not available through the API");
  ExpectError(
      Post(router, "/api/v1/estimate-memory", R"({"model": "bert-base-cased", "version": true})"),
      400, "not available through the API");
  // A value that looks like an option is a value of its field (the typed request has no
  // arguments to confuse), answered with the field's own error.
  auto gpus = api::GpusRequestFromJson(nlohmann::json{{"vendor", "--export-configs=x"}});
  ASSERT_FALSE(gpus);
  EXPECT_EQ(gpus.error().message.find("--vendor --export-configs=x: expected"), 0u)
      << gpus.error().message;
  auto size = api::GpusRequestFromJson(nlohmann::json{{"min-memory", "-1"}});
  ASSERT_FALSE(size);
  EXPECT_EQ(size.error().message.find("--min-memory -1: "), 0u) << size.error().message;
  ExpectError(Post(router, "/api/v1/gpus", R"({"vendor": "--export-configs=x"})"), 422,
              "--export-configs=x");
  ExpectError(Post(router, "/api/v1/gpus", R"({"vendor": "nvidia="})"), 422, "nvidia=");
  // An option of another command, or none at all, is the CLI's usage error: 400.
  ExpectError(Post(router, "/api/v1/gpus", R"({"family": "llama"})"), 400,
              "option \"family\": not an option of this command");
  ExpectError(Post(router, "/api/v1/models", R"({"model": "gpt2"})"), 400,
              "option \"model\": not an option of this command");
  auto empty = api::GpusRequestFromJson(nlohmann::json{{"vendor", ""}});
  ASSERT_TRUE(empty) << empty.error().message;
  EXPECT_EQ(empty->vendor, "");
  ExpectError(Post(router, "/api/v1/fit", R"({"model": "bert-base-cased", "gpu": ""})"), 422,
              "--gpu \"\": empty GPU name");
}

TEST(Router, RequestBodiesAreParsedWithLimits) {
  // nlohmann's parser took any nesting and kept the last of duplicate keys; the body now goes
  // through ParseJson (64 levels, duplicates are errors), like every other JSON memfit reads.
  Router router(ServerOptions{});
  ExpectError(
      Post(router, "/api/v1/estimate-memory", std::string(100, '[') + std::string(100, ']')), 400,
      "nested deeper than 64 levels");
  ExpectError(
      Post(router, "/api/v1/estimate-memory", R"({"model": "bert-base-cased", "model": "gpt2"})"),
      400, "duplicate key \"model\"");
  ExpectError(Post(router, "/api/v1/hub/discussion", std::string(100, '{')), 400, "nested deeper");
  // A field of the wrong type was reported as "not valid JSON".
  ExpectError(Post(router, "/api/v1/hub/discussion", R"({"model": 5})"), 400,
              "\"model\" must be a string");
  auto ok = Post(router, "/api/v1/estimate-memory", R"({"model": "bert-base-cased"})");
  EXPECT_EQ(ok.status, 200) << ok.body;
}

// A batch answers each request as its own POST would (the same bytes, errors included, in
// order), and refuses a malformed batch as a whole.
TEST(Router, BatchAnswersEachRequestAsItsOwnPost) {
  Router router(ServerOptions{});
  const std::string a = R"({"model": "bert-base-cased"})";
  const std::string b = R"({"model": "meta-llama/Llama-3.2-1B", "context": 1024, "quant": "nf4-dq"})";
  const std::string bad = R"({"model": "bert-base-cased", "context": -1})";
  auto batch = Post(router, "/api/v1/batch",
                    R"({"requests": [{"command": "estimate-memory", "body": )" + a +
                        R"(}, {"command": "inference", "body": )" + b +
                        R"(}, {"command": "inference", "body": )" + bad + "}]}");
  ASSERT_EQ(batch.status, 200) << batch.body;
  auto results = nlohmann::json::parse(batch.body)["results"];
  ASSERT_EQ(results.size(), 3u);
  const std::pair<std::string, std::string> alone[] = {
      {"/api/v1/estimate-memory", a}, {"/api/v1/inference", b}, {"/api/v1/inference", bad}};
  for (size_t i = 0; i < 3; ++i) {
    auto single = Post(router, alone[i].first, alone[i].second);
    EXPECT_EQ(results[i]["status"], single.status) << i;
    EXPECT_EQ(results[i]["body"], nlohmann::json::parse(single.body)) << i;
  }
  EXPECT_NE(results[2]["status"], 200);
  ExpectError(Post(router, "/api/v1/batch", R"({"requests": []})"), 400, "1 to 32 requests");
  std::string many = R"({"requests": [)";
  for (int i = 0; i < 33; ++i) many += std::string(i ? "," : "") + R"({"command": "models", "body": {}})";
  ExpectError(Post(router, "/api/v1/batch", many + "]}"), 400, "not 33");
  ExpectError(Post(router, "/api/v1/batch", R"({"requests": [{"command": "serve", "body": {}}]})"), 400,
              "request 0");
  ExpectError(Post(router, "/api/v1/batch", R"([1, 2])"), 400, "expected");
  EXPECT_FALSE(router.AnswerNow({.method = "POST", .path = "/api/v1/batch", .params = {},
                                 .authorization = "", .body = "{}"}).has_value());
}

TEST(Router, EveryErrorIsOneLineOfJson) {
  // "not found: " + a decoded path holding "\n" was a multi-line error; an unknown POST path was
  // httplib's 404 with an empty body.
  Router router(ServerOptions{});
  ExpectError(Get(router, "/x\r\nSet-Cookie: a"), 404, "not found: /x\\r\\nSet-Cookie: a");
  ExpectError(Post(router, "/nowhere", "{}"), 404, "not found: /nowhere");
  ExpectError(Post(router, "/api/v1/UPPER", "{}"), 404, "not found");
  ExpectError(router.Handle({.method = "PUT",
                             .path = "/api/v1/health",
                             .params = {},
                             .authorization = "",
                             .body = ""}),
              405, "method PUT not allowed");
  auto health = Get(router, "/api/v1/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, R"({"status":"ok"})");
}

TEST(Router, AnswersDoNotNameTheServersDirectories) {
  // Found by fuzz/server_request_fuzz.cc: "model not found" listed the Hugging Face cache the CLI
  // looked in, /home/<user>/.cache/huggingface/hub on a real server.
  Router router(ServerOptions{});
  const std::string cache = DefaultHfHubCache();
  ASSERT_GT(cache.size(), 1u);
  auto r = Post(router, "/api/v1/estimate-memory", R"({"model": "Llama~3.2-9B"})");
  ExpectError(r, 404, "local Hugging Face cache ($HF_HUB_CACHE)");
  EXPECT_EQ(r.body.find(cache), std::string::npos) << r.body;
  // Whole paths only: the home directory inside a model name is the name.
  testing::ScopedEnv env;
  env.Set("HOME", "/tmp/memfit-home");
  auto named = Post(router, "/api/v1/estimate-memory", R"({"model": "a/tmp/memfit-home/b"})");
  ExpectError(named, 404, "a/tmp/memfit-home/b: model not found");
}

TEST(Router, NoHubRequestWhenOffline) {
  // With HF_HUB_OFFLINE=1 the Hub client sends nothing, but "Post to the Hub" still posted.
  httplib::Server hub;
  int requests = 0;
  hub.Get(".*", [&](const httplib::Request&, httplib::Response& res) {
    ++requests;
    res.set_content(R"({"discussions": []})", "application/json");
  });
  hub.Post(".*", [&](const httplib::Request&, httplib::Response& res) {
    ++requests;
    res.set_content(R"({"num": 1})", "application/json");
  });
  const int port = hub.bind_to_any_port("127.0.0.1");
  std::thread t([&] { hub.listen_after_bind(); });
  // stop() before listening has begun would be lost (and join() would wait forever).
  while (!hub.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  testing::ScopedEnv env;
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(port);
  env.Set("HF_ENDPOINT", endpoint.c_str());
  env.Set("HF_HUB_OFFLINE", "1");
  const std::string record = testing::TempDir() + "/posted.txt";
  env.Set("MEMFIT_POST_RECORD", record.c_str());
  Router router(ServerOptions{});
  ExpectError(Post(router, "/api/v1/hub/discussion",
                   R"({"model": "acme/tiny", "description": "| x |"})", "Bearer hf_secret"),
              400, "offline");
  EXPECT_EQ(requests, 0);
  EXPECT_FALSE(std::filesystem::exists(record));
  hub.stop();
  t.join();
}

TEST(Router, AnswerNowGivesWhatNeedsNoWorkAndTheSameAnswerAsHandle) {
  Router router(ServerOptions{});
  const HttpRequest health{.method = "GET", .path = "/api/v1/health", .params = {},
                           .authorization = "", .body = ""};
  auto now = router.AnswerNow(health);
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(now->status, 200);
  const HttpRequest gpus{.method = "POST", .path = "/api/v1/gpus", .params = {},
                         .authorization = "", .body = R"({"vendor": "nvidia"})"};
  // Uncached: work for a worker.
  EXPECT_FALSE(router.AnswerNow(gpus).has_value());
  const HttpResponse handled = router.Handle(gpus);
  ASSERT_EQ(handled.status, 200);
  // Cached now: the same bytes, without a worker.
  auto cached = router.AnswerNow(gpus);
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->body, handled.body);
  // Errors found by checking the request need no worker either.
  auto bad = router.AnswerNow({.method = "POST", .path = "/api/v1/gpus", .params = {},
                               .authorization = "", .body = "{nope"});
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, 400);
  // The Hub's routes always go to a worker.
  EXPECT_FALSE(router.AnswerNow({.method = "GET", .path = "/api/v1/hub/models",
                                 .params = {{"search", "llama"}}, .authorization = "", .body = ""})
                   .has_value());
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::server
