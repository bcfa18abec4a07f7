// The listener: binds, accepts on the io threads, applies the connection caps, and hands each
// admitted socket to its own connection (server/connection.h).

#include "server/server.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "server/connection.h"
#include "server/connection_limits.h"
#include "server/router.h"
#include "server/worker_pool.h"

namespace memfit::server {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// max_connections, or fewer when the process's descriptors would run out first (said once).
int ConnectionCap(int wanted) {
  const uint64_t descriptors = RaiseDescriptorLimit();
  const int cap = ConnectionCapForDescriptors(wanted, descriptors);
  if (cap < wanted) {
    std::fprintf(stderr,
                 "memfit serve: at most %d connections, not %d: %llu file descriptors "
                 "(ulimit -n)\n",
                 cap, wanted, static_cast<unsigned long long>(descriptors));
  }
  return cap;
}

}  // namespace

// Members are destroyed in reverse order: the workers stop first (they call the router and post
// to the io_context), then the router, the listening socket, and last the io_context, whose
// destruction drops the connections still open.
struct Server::Impl {
  explicit Impl(ServerOptions o)
      : options(std::move(o)),
        limits(std::make_shared<ConnectionLimits>(ConnectionCap(options.max_connections),
                                                  options.max_connections_per_address)),
        acceptor(io),
        retry_timer(io),
        router(options),
        pool(options.worker_threads, static_cast<size_t>(std::max(1, options.max_queued_requests))),
        context{options, router, pool, *limits} {}

  void Accept() {
    acceptor.async_accept(
        net::make_strand(io), [this](boost::system::error_code ec, tcp::socket socket) {
          if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
          if (ec) {
            // Out of descriptors or a transient error: wait a little rather than spin.
            retry_timer.expires_after(std::chrono::milliseconds(50));
            retry_timer.async_wait([this](boost::system::error_code wait_ec) {
              if (!wait_ec) Accept();
            });
            return;
          }
          boost::system::error_code address_ec;
          const std::string address = socket.remote_endpoint(address_ec).address().to_string();
          auto admission = address_ec ? nullptr : limits->Admit(address);
          if (!admission) {
            socket.close(address_ec);  // over a cap: closed before a byte is read
          } else {
            socket.set_option(tcp::no_delay(true), address_ec);  // small answers, no Nagle delay
            StartConnection(std::move(socket), std::move(admission), context);
          }
          Accept();
        });
  }

  // One io thread. A handler that throws (out of memory) loses its connection, not the process:
  // the connection's handlers are gone with the exception, so it closes when destroyed.
  void Run() {
    for (;;) {
      try {
        io.run();
        return;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "memfit serve: internal error: %s\n", e.what());
      }
    }
  }

  ServerOptions options;
  std::shared_ptr<ConnectionLimits> limits;
  net::io_context io;
  tcp::acceptor acceptor;
  net::steady_timer retry_timer;
  Router router;
  WorkerPool pool;
  ConnectionContext context;
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Server::~Server() {
  Stop();
  impl_->pool.Shutdown();
}

Result<int> Server::Bind() {
  auto& o = impl_->options;
  if (o.warm_cache) impl_->router.Warm();
  boost::system::error_code ec;
  const auto address = net::ip::make_address(o.host, ec);
  if (ec) return MakeError("serve: {} is not an IP address", o.host);
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(o.port));
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    const std::string reason = ec.message();
    acceptor.close(ec);
    return MakeError("serve: cannot listen on {}:{}: {}", o.host, o.port, reason);
  }
  return static_cast<int>(acceptor.local_endpoint(ec).port());
}

void Server::Listen() {
  Impl& impl = *impl_;
  if (!impl.acceptor.is_open()) return;
  impl.Accept();
  std::vector<std::thread> threads;
  for (int i = 1; i < impl.options.io_threads; ++i) threads.emplace_back([&impl] { impl.Run(); });
  impl.Run();
  for (auto& t : threads) t.join();
}

void Server::Stop() { impl_->io.stop(); }

ServerStats Server::Stats() const { return impl_->limits->Stats(); }

}  // namespace memfit::server
