// "Post to the Hub" through the project's Hub client (hub/net/http_client.h): its redirect rules
// apply to the discussion's POST too. HubPost.PostsOnceAndNeverTwice (server_test.cc) covers the
// listing, the record and the duplicate checks.

#include "server/hub_post.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "test_support.h"

namespace memfit::server {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

// A stand-in server on loopback, listening until destroyed.
class StandIn {
 public:
  StandIn() {
    port_ = http.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { http.listen_after_bind(); });
    while (!http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~StandIn() {
    http.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  httplib::Server http;

 private:
  int port_ = 0;
  std::thread thread_;
};

TEST(HubPost, ARedirectedPostKeepsItsBodyButNotTheToken) {
  // A 307 from the Hub to another host: the POST and its body follow, the token stays behind.
  StandIn elsewhere, hub;
  std::string elsewhere_auth = "unset", elsewhere_body;
  elsewhere.http.Post("/create", [&](const httplib::Request& req, httplib::Response& res) {
    elsewhere_auth = req.get_header_value("Authorization");
    elsewhere_body = req.body;
    res.set_content(R"({"num": 3})", "application/json");
  });
  hub.http.Get("/api/models/acme/tiny/discussions",
               [](const httplib::Request&, httplib::Response& res) {
                 res.set_content(R"({"discussions": []})", "application/json");
               });
  std::string hub_auth;
  hub.http.Post("/api/models/acme/tiny/discussions",
                [&](const httplib::Request& req, httplib::Response& res) {
                  hub_auth = req.get_header_value("Authorization");
                  res.status = 307;
                  res.set_header("Location", elsewhere.url() + "/create");
                });
  auto result = PostDiscussion({.model = "acme/tiny",
                                .revision = "main",
                                .title = "[memfit] t",
                                .description = "| x |",
                                .token = "hf_secret"},
                               hub.url(), testing::TempDir() + "/redirected.txt");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->url, hub.url() + "/acme/tiny/discussions/3");
  EXPECT_EQ(hub_auth, "Bearer hf_secret");
  EXPECT_EQ(elsewhere_auth, "");
  EXPECT_EQ(nlohmann::json::parse(elsewhere_body)["description"], "| x |");
}

TEST(HubPost, AnUnreachableHubIsAnError) {
  int port = 0;
  {
    StandIn closed;  // a port that was just free
    port = std::stoi(closed.url().substr(closed.url().rfind(':') + 1));
  }
  auto result = PostDiscussion({.model = "acme/tiny",
                                .revision = "main",
                                .title = "t",
                                .description = "x",
                                .token = "hf_secret"},
                               "http://127.0.0.1:" + std::to_string(port),
                               testing::TempDir() + "/unreachable.txt");
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("cannot reach"), std::string::npos);
  EXPECT_EQ(result.error().message.find("hf_secret"), std::string::npos);
}

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::server
