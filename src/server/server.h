#pragma once
// memfit serve: the embedded web page and a JSON API over the same operations as the CLI.
// Every API call runs the CLI's own code path with --format json, so the API returns exactly the
// CLI's JSON and error messages (docs/api.md, docs/openapi.yaml).
//
// The transport is event-driven (Boost.Beast on Boost.Asio): a few io threads accept, read and
// write every connection; a connection waiting for bytes holds no thread. Each parsed request is
// handed to a bounded pool of worker threads that call Router::Handle (server/router.h), which may
// wait seconds for the Hub. Limits and their defaults: docs/security.md.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "memfit/result.h"

namespace memfit::server {

struct ServerOptions {
  std::string host = "127.0.0.1";       // localhost only unless asked
  int port = 8000;                      // 0: any free port (tests)
  size_t max_body_bytes = 64 * 1024;    // larger: 413 and the connection is closed
  size_t max_header_bytes = 16 * 1024;  // request line and headers; larger: 431 and closed
  // From a request's first byte until its headers and body have arrived; past it the connection
  // is closed (a client sending one byte a second holds no thread, and not for long).
  int request_timeout_s = 10;
  int idle_timeout_s = 20;   // a connection (new, or kept alive) waiting for a request's first byte
  int write_timeout_s = 10;  // sending one response
  int max_connections = 4096;            // open at once, all clients; more: closed at once
  int max_connections_per_address = 64;  // open at once from one client IP; more: closed at once
  int io_threads = 2;                    // run the sockets (>= 1); never call the router
  int worker_threads = 16;               // call Router::Handle (>= 1; may wait for the Hub)
  int max_queued_requests = 1024;        // parsed requests waiting for a worker (>= 1); more: 503
  int max_concurrent_estimates = 4;      // uncached computations (Hub fetches) at once
  size_t cache_entries = 512;            // cached successful responses
  // Resolved and described models the process keeps (memfit/resolve.h, ConfigureModelCache), so
  // that a new request for a model seen moments ago pays only for its estimate: at most this many
  // models, this many tensors in all (about 300 bytes each), and what went through the Hub client
  // for this long. 0 entries: off.
  size_t model_cache_entries = 256;
  uint64_t model_cache_tensors = 2'000'000;
  uint32_t model_cache_ttl_ms = 10'000;
  // Answer the catalog and GPU lists once before listening, so that the page's first load finds
  // them cached (`memfit serve` sets it; tests that start many servers do not).
  bool warm_cache = false;
};

// Counters since the server was made (for tests and logs).
struct ServerStats {
  uint64_t open_connections = 0;
  uint64_t accepted_connections = 0;
  uint64_t refused_connections = 0;    // over max_connections or max_connections_per_address
  uint64_t timed_out_connections = 0;  // request, idle or write timeout
  uint64_t busy_responses = 0;         // 503: the worker queue was full
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();  // stops, joins every thread, closes every connection
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the socket; returns the port it listens on.
  Result<int> Bind();
  // Serves until Stop() (blocking): runs the io threads, this one among them. Returns at once if
  // Stop() came first.
  void Listen();
  // Thread-safe, returns at once; Listen() returns soon after. A request a worker is running
  // finishes in the destructor, which waits for it.
  void Stop();
  ServerStats Stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace memfit::server
