// The transport's limits over real loopback sockets (server/server.h, server/connection.h): slow
// and idle clients hold no thread, deadlines close connections, the caps close excess ones, and
// oversized requests get the JSON errors. Failure is a read that times out after a few seconds;
// nothing here measures time.

#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server/server.h"
#include "server/test_client.h"

namespace memfit::server {
namespace {

using socket_test::BodyOf;
using socket_test::StatusOf;
using socket_test::TestClient;

constexpr char kEstimate[] = R"({"model": "meta-llama/Llama-3.2-1B"})";

std::string Get(const std::string& path, const std::string& method = "GET") {
  return method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
}

std::string Post(const std::string& path, const std::string& body) {
  return "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

class RunningServer {
 public:
  explicit RunningServer(ServerOptions options) : server_(std::move(options)) {
    auto port = server_.Bind();
    EXPECT_TRUE(port) << port.error().message;
    port_ = port ? *port : 0;
    thread_ = std::thread([this] { server_.Listen(); });
  }
  ~RunningServer() {
    server_.Stop();
    thread_.join();
  }
  int port() const { return port_; }
  Server& server() { return server_; }

  // One request on a fresh connection from `source`; the response, or nullopt.
  std::optional<std::string> Ask(const std::string& request, const std::string& source = "127.0.0.1",
                                 bool head = false) {
    TestClient client(port_, source);
    if (!client.valid() || !client.Send(request)) return std::nullopt;
    return client.ReadResponse(head);
  }

 private:
  Server server_;
  int port_ = 0;
  std::thread thread_;
};

// "127.0.<third>.<fourth>" for the i-th simulated client, `per_address` to an address.
std::string SourceAddress(int third, int i, int per_address) {
  return "127.0." + std::to_string(third) + "." + std::to_string(2 + i / per_address);
}

TEST(ServerLimits, HealthAndCachedEstimateAnswerUnderSlowAndIdleClients) {
  // Under the thread-per-connection server, 64 slow clients (or 128 idle ones) left no thread
  // for /api/v1/health.
  RunningServer running(ServerOptions{.port = 0});
  auto warm = running.Ask(Post("/api/v1/estimate-memory", kEstimate));
  ASSERT_EQ(StatusOf(warm), 200);

  constexpr int kSlow = 200, kIdle = 200, kPerAddress = 20;
  std::vector<TestClient> slow, idle;
  for (int i = 0; i < kSlow; ++i) slow.emplace_back(running.port(), SourceAddress(1, i, kPerAddress));
  for (int i = 0; i < kIdle; ++i) idle.emplace_back(running.port(), SourceAddress(2, i, kPerAddress));
  for (const auto& c : slow) ASSERT_TRUE(c.valid());
  for (const auto& c : idle) ASSERT_TRUE(c.valid());
  const std::string slow_request = "GET /api/v1/health HTTP/1.1\r\nX-Slow: ";
  for (size_t byte = 0; byte < 3; ++byte) {
    // Every slow client sends one more byte of its headers, then the real clients ask.
    for (auto& c : slow) c.Send(std::string(1, byte < slow_request.size() ? slow_request[byte] : 'a'));
    auto health = running.Ask(Get("/api/v1/health"));
    ASSERT_EQ(StatusOf(health), 200) << "round " << byte;
    EXPECT_EQ(BodyOf(*health), R"({"status":"ok"})");
    auto estimate = running.Ask(Post("/api/v1/estimate-memory", kEstimate));
    ASSERT_EQ(StatusOf(estimate), 200) << "round " << byte;
    EXPECT_EQ(BodyOf(*estimate), BodyOf(*warm));
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  const ServerStats stats = running.server().Stats();
  EXPECT_EQ(stats.refused_connections, 0u);
  EXPECT_GE(stats.open_connections, static_cast<uint64_t>(kSlow + kIdle));
}

TEST(ServerLimits, ASlowRequestIsCutAtItsDeadline) {
  RunningServer running(ServerOptions{.port = 0, .request_timeout_s = 1, .idle_timeout_s = 30});
  TestClient client(running.port(), "127.0.0.1", /*timeout_s=*/10);
  ASSERT_TRUE(client.valid());
  // One byte every 100 ms for up to 20 s: the 1 s deadline from the first byte must close it long
  // before this ends (a send into a closed connection fails).
  const std::string request = "GET /api/v1/health HTTP/1.1\r\nX-Slow: " + std::string(200, 'a');
  bool closed = false;
  for (char c : request) {
    if (!client.Send(std::string(1, c))) {
      closed = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(closed || client.ClosedByServer());
  EXPECT_GE(running.server().Stats().timed_out_connections, 1u);
}

TEST(ServerLimits, AnIdleConnectionIsClosed) {
  RunningServer running(ServerOptions{.port = 0, .idle_timeout_s = 1});
  TestClient fresh(running.port(), "127.0.0.1", /*timeout_s=*/10);
  EXPECT_TRUE(fresh.ClosedByServer());
  // A kept-alive connection too, after its answer.
  TestClient kept(running.port(), "127.0.0.1", 10);
  ASSERT_TRUE(kept.Send(Get("/api/v1/health")));
  EXPECT_EQ(StatusOf(kept.ReadResponse()), 200);
  EXPECT_TRUE(kept.ClosedByServer());
}

TEST(ServerLimits, ConnectionsOverTheCapsAreClosedAtOnce) {
  RunningServer running(ServerOptions{.port = 0, .max_connections = 6, .max_connections_per_address = 3});
  std::vector<TestClient> held;
  for (int i = 0; i < 3; ++i) {
    held.emplace_back(running.port(), "127.0.0.1");
    // Answered, so admitted before the next one connects.
    ASSERT_TRUE(held.back().Send(Get("/api/v1/health")));
    ASSERT_EQ(StatusOf(held.back().ReadResponse()), 200);
  }
  TestClient excess(running.port(), "127.0.0.1");
  ASSERT_TRUE(excess.valid());  // the kernel completes the handshake; the server closes it
  EXPECT_TRUE(excess.ClosedByServer());
  EXPECT_EQ(running.server().Stats().refused_connections, 1u);
  // Another address still gets in, up to the total cap.
  EXPECT_EQ(StatusOf(running.Ask(Get("/api/v1/health"), "127.0.0.2")), 200);
  for (int i = 0; i < 3; ++i) {
    held.emplace_back(running.port(), "127.0.0.3");
    ASSERT_TRUE(held.back().Send(Get("/api/v1/health")));
    ASSERT_EQ(StatusOf(held.back().ReadResponse()), 200);
  }
  TestClient over_total(running.port(), "127.0.0.4");
  EXPECT_TRUE(over_total.ClosedByServer());
  EXPECT_EQ(running.server().Stats().refused_connections, 2u);
  // Places come back when connections close.
  held.clear();
  bool answered = false;
  for (int attempt = 0; attempt < 50 && !answered; ++attempt) {
    answered = StatusOf(running.Ask(Get("/api/v1/health"))) == 200;
    if (!answered) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(answered);
}

TEST(ServerLimits, OversizedRequestsGetJsonErrors) {
  RunningServer running(ServerOptions{.port = 0, .max_body_bytes = 4096, .max_header_bytes = 2048});
  // A Content-Length over the limit is refused before the body is read.
  auto declared = running.Ask(
      "POST /api/v1/estimate-memory HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n");
  ASSERT_EQ(StatusOf(declared), 413);
  EXPECT_EQ(nlohmann::json::parse(BodyOf(*declared))["error"], "request body too large");
  // A chunked body over the limit, as it arrives.
  std::string chunk(3000, ' ');
  auto chunked = running.Ask(
      "POST /api/v1/estimate-memory HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "bb8\r\n" + chunk + "\r\nbb8\r\n" + chunk + "\r\n0\r\n\r\n");
  ASSERT_EQ(StatusOf(chunked), 413);
  auto headers = running.Ask("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4000, 'a') +
                             "\r\n\r\n");
  ASSERT_EQ(StatusOf(headers), 431);
  EXPECT_EQ(nlohmann::json::parse(BodyOf(*headers))["error"], "request headers too large");
  auto garbage = running.Ask("NOT HTTP AT ALL\r\n\r\n");
  ASSERT_EQ(StatusOf(garbage), 400);
  EXPECT_TRUE(nlohmann::json::parse(BodyOf(*garbage))["error"].is_string());
}

TEST(ServerLimits, KeepAliveHeadAndQueries) {
  RunningServer running(ServerOptions{.port = 0});
  TestClient client(running.port());
  for (int i = 0; i < 3; ++i) {  // one connection, several requests
    ASSERT_TRUE(client.Send(Get("/api/v1/health")));
    auto response = client.ReadResponse();
    ASSERT_EQ(StatusOf(response), 200) << i;
    EXPECT_EQ(BodyOf(*response), R"({"status":"ok"})");
  }
  ASSERT_TRUE(client.Send(Get("/api/v1/health", "HEAD")));
  auto head = client.ReadResponse(/*head=*/true);
  ASSERT_EQ(StatusOf(head), 200);
  EXPECT_NE(head->find("Content-Length: 15"), std::string::npos) << *head;
  EXPECT_EQ(BodyOf(*head), "");
  // The page says no-cache; a decoded query reaches the router (an unknown family: no models).
  auto index = running.Ask(Get("/"));
  ASSERT_EQ(StatusOf(index), 200);
  EXPECT_NE(index->find("Cache-Control: no-cache"), std::string::npos);
  auto models = running.Ask(Get("/api/v1/models?family=no%20such+family"));
  EXPECT_NE(StatusOf(models), 0);
  EXPECT_NE(StatusOf(models), 500);
  auto put = running.Ask("PUT /api/v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(StatusOf(put), 405);
  EXPECT_EQ(nlohmann::json::parse(BodyOf(*put))["error"], "method PUT not allowed");
}

TEST(ServerLimits, StopReturnsWithConnectionsOpen) {
  auto running = std::make_unique<RunningServer>(ServerOptions{.port = 0});
  std::vector<TestClient> idle;
  for (int i = 0; i < 20; ++i) idle.emplace_back(running->port());
  TestClient half(running->port());
  ASSERT_TRUE(half.Send("POST /api/v1/estimate-memory HTTP/1.1\r\nContent-Length: 10\r\n\r\n{"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  running.reset();  // Stop, join, destroy: a hang here is the failure (the test's timeout)
  EXPECT_TRUE(half.ClosedByServer());
}

}  // namespace
}  // namespace memfit::server
