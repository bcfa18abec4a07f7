// The transport's limits over real loopback sockets (server/server.h, server/connection.h): slow
// and idle clients hold no thread, deadlines close connections, the caps close excess ones, and
// oversized requests get the JSON errors. Failure is a read that times out after a few seconds;
// nothing here measures time.

#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "hub_fixtures.h"
#include "server/server.h"
#include "server/test_client.h"
#include "test_support.h"

namespace memfit::server {
namespace { namespace MEMFIT_TU {  // MEMFIT_TU: unique per file in a unity build (CMakeLists.txt)

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
  std::optional<std::string> Ask(const std::string& request,
                                 const std::string& source = "127.0.0.1", bool head = false) {
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
  for (int i = 0; i < kSlow; ++i)
    slow.emplace_back(running.port(), SourceAddress(1, i, kPerAddress));
  for (int i = 0; i < kIdle; ++i)
    idle.emplace_back(running.port(), SourceAddress(2, i, kPerAddress));
  for (const auto& c : slow) ASSERT_TRUE(c.valid());
  for (const auto& c : idle) ASSERT_TRUE(c.valid());
  const std::string slow_request = "GET /api/v1/health HTTP/1.1\r\nX-Slow: ";
  for (size_t byte = 0; byte < 3; ++byte) {
    // Every slow client sends one more byte of its headers, then the real clients ask.
    for (auto& c : slow)
      c.Send(std::string(1, byte < slow_request.size() ? slow_request[byte] : 'a'));
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
  RunningServer running(
      ServerOptions{.port = 0, .max_connections = 6, .max_connections_per_address = 3});
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
      "bb8\r\n" +
      chunk + "\r\nbb8\r\n" + chunk + "\r\n0\r\n\r\n");
  ASSERT_EQ(StatusOf(chunked), 413);
  auto headers =
      running.Ask("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4000, 'a') + "\r\n\r\n");
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

// A loopback "Hub" that accepts one connection and says nothing until Release(): a request to it
// holds its worker for as long as the test wants.
class SilentHub {
 public:
  SilentHub() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    socklen_t size = sizeof address;
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), size);
    ::listen(listen_fd_, 8);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      accepted_fd_ = ::accept(listen_fd_, nullptr, nullptr);
      accepted_.set_value();
      released_.get_future().wait();
      if (accepted_fd_ >= 0) ::close(accepted_fd_);
    });
  }
  ~SilentHub() {
    Release();
    ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept() if nothing came
    thread_.join();
    ::close(listen_fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Whether a client connected within a few seconds.
  bool WaitForClient() {
    return accepted_future_.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  }
  void Release() {
    if (!released_set_) released_.set_value();
    released_set_ = true;
  }

 private:
  int listen_fd_ = -1;
  int accepted_fd_ = -1;
  int port_ = 0;
  std::promise<void> accepted_;
  std::future<void> accepted_future_ = accepted_.get_future();
  std::promise<void> released_;
  bool released_set_ = false;
  std::thread thread_;
};

TEST(ServerLimits, AFullWorkerQueueAnswers503) {
  // One worker, one queued request: the worker waits on a Hub that does not answer (the
  // discussion route), a health check waits in the queue, the next one is refused at once.
  SilentHub hub;
  memfit::testing::ScopedEnv env;  // before the server: its threads read the environment
  env.Set("HF_HUB_OFFLINE", nullptr);
  env.Set("TRANSFORMERS_OFFLINE", nullptr);
  env.Set("HF_ENDPOINT", hub.url().c_str());
  const std::string record = memfit::testing::TempDir() + "/busy-posted.txt";
  env.Set("MEMFIT_POST_RECORD", record.c_str());
  RunningServer running(ServerOptions{.port = 0, .worker_threads = 1, .max_queued_requests = 1});
  TestClient busy(running.port(), "127.0.0.1", /*timeout_s=*/30);
  const std::string post = R"({"model": "acme/tiny", "description": "| x |"})";
  ASSERT_TRUE(
      busy.Send("POST /api/v1/hub/discussion HTTP/1.1\r\nHost: x\r\n"
                "Authorization: Bearer hf_test\r\nContent-Length: " +
                std::to_string(post.size()) + "\r\n\r\n" + post));
  ASSERT_TRUE(hub.WaitForClient());  // the worker is inside the router
  // Two uncached requests (work for a worker): one waits in the queue, the other is refused at
  // once. Which is which depends on which the server read first, so the first to get an answer is
  // the refused one.
  const auto gpus = [](const std::string& vendor) {
    const std::string body = R"({"vendor": ")" + vendor + R"("})";
    return "POST /api/v1/gpus HTTP/1.1\r\nHost: x\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  TestClient first(running.port(), "127.0.0.1", 30), second(running.port(), "127.0.0.1", 30);
  ASSERT_TRUE(first.Send(gpus("nvidia")));
  ASSERT_TRUE(second.Send(gpus("amd")));
  pollfd fds[2] = {{.fd = first.fd(), .events = POLLIN, .revents = 0},
                   {.fd = second.fd(), .events = POLLIN, .revents = 0}};
  ASSERT_GT(::poll(fds, 2, 10'000), 0);
  TestClient& refused = (fds[0].revents & POLLIN) ? first : second;
  TestClient& waiting = (fds[0].revents & POLLIN) ? second : first;
  auto answer = refused.ReadResponse();
  ASSERT_EQ(StatusOf(answer), 503);
  EXPECT_EQ(nlohmann::json::parse(BodyOf(*answer))["error"],
            "the server is busy; try again shortly");
  EXPECT_EQ(running.server().Stats().busy_responses, 1u);
  // Health needs no worker: it answers while the worker and the queue are full.
  TestClient health(running.port(), "127.0.0.1", 30);
  ASSERT_TRUE(health.Send(Get("/api/v1/health")));
  EXPECT_EQ(StatusOf(health.ReadResponse()), 200);
  hub.Release();  // the Hub hangs up: the post fails, the queue moves
  EXPECT_EQ(StatusOf(busy.ReadResponse()), 400);
  EXPECT_EQ(StatusOf(waiting.ReadResponse()), 200);
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

}  // namespace MEMFIT_TU
}  // namespace
}  // namespace memfit::server
