#pragma once
// memfit serve: the embedded web page and a JSON API over the same operations as the CLI.
// Every API call runs the CLI's own code path with --format json, so the API returns exactly the
// CLI's JSON and error messages (docs/api.md, docs/openapi.yaml).

#include <cstdint>
#include <memory>
#include <string>

#include "memfit/result.h"

namespace memfit::server {

struct ServerOptions {
  std::string host = "127.0.0.1";  // localhost only unless asked
  int port = 8000;                 // 0: any free port (tests)
  size_t max_body_bytes = 64 * 1024;
  int read_timeout_s = 10;
  int write_timeout_s = 10;
  int worker_threads = 64;  // each keep-alive connection holds one while open
  int max_concurrent_estimates = 4;  // uncached computations (Hub fetches) at once
  size_t cache_entries = 512;        // cached successful responses
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the socket; returns the port it listens on.
  Result<int> Bind();
  // Serves until Stop() (blocking).
  void Listen();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace memfit::server
