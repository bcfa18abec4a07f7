// `memfit serve`: the web page and the JSON API on localhost.

#include <cstdlib>

#include "cli/command.h"
#include "server/server.h"

namespace memfit::cli {

void AddServeCommand(CLI::App& app, Context& ctx) {
  auto options = std::make_shared<server::ServerOptions>();
  options->warm_cache = true;
  auto* cmd = app.add_subcommand("serve", "serve the memfit web page and JSON API");
  cmd->add_option("--host", options->host, "address to bind (default 127.0.0.1: this machine only)");
  cmd->add_option("--port", options->port, "port (default 8000)")->check(CLI::Range(0, 65535));
  cmd->add_option("--max-connections", options->max_connections,
                  "connections open at once, all clients (default 4096); more are closed at once")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-connections-per-address", options->max_connections_per_address,
                  "connections open at once from one client address (default 64; behind a "
                  "reverse proxy every client has the proxy's address)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--workers", options->worker_threads,
                  "threads answering requests (default 16); the sockets have their own")
      ->check(CLI::Range(1, 1024));
  cmd->callback([options, &ctx] {
    // A request waits at most this long for the Hub, then answers from the caches or the catalog
    // (docs/hub.md, "When the Hub is slow or down"). Set before any worker thread exists.
    ::setenv("MEMFIT_HUB_DEADLINE", "5", /*overwrite=*/0);
    server::Server server(*options);
    auto port = server.Bind();
    if (!port) return ctx.Fail(port.error());
    ctx.err << "memfit: serving on http://" << options->host << ":" << *port << "/\n";
    ctx.err.flush();
    server.Listen();
  });
}

}  // namespace memfit::cli
