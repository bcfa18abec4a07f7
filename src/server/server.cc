#include "server/server.h"

#include <cstdio>

#include <httplib.h>

#include "server/api.h"
#include "server/router.h"

namespace memfit::server {
namespace {

// The reason phrase of a status httplib answers itself (malformed request, body too large, a
// method without routes), for the {"error": ...} body every non-200 answer carries.
std::string_view StatusText(int status) {
  switch (status) {
    case 400: return "bad request";
    case 404: return "not found";
    case 405: return "method not allowed";
    case 408: return "request timeout";
    case 413: return "request body too large";
    case 414: return "request URI too long";
    case 416: return "range not satisfiable";
    case 431: return "request headers too large";
    case 500: return "internal error";
    case 501: return "not implemented";
    case 503: return "the server is busy; try again shortly";
    default: return "request failed";
  }
}

}  // namespace

struct Server::Impl {
  explicit Impl(ServerOptions o) : options(std::move(o)), router(options) {}

  ServerOptions options;
  Router router;
  httplib::Server http;
  int port = 0;
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  auto& http = impl_->http;
  Impl* impl = impl_.get();
  http.set_payload_max_length(impl->options.max_body_bytes);
  // Small keep-alive responses: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms to each.
  http.set_tcp_nodelay(true);
  http.set_keep_alive_max_count(1000);
  http.set_read_timeout(impl->options.read_timeout_s, 0);
  http.set_write_timeout(impl->options.write_timeout_s, 0);
  const int threads = impl->options.worker_threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    auto error = ErrorResponse(500, "internal error");
    res.status = error.status;
    res.set_content(error.body, "application/json");
  });
  // Errors httplib produces itself (413, 400, 404 for PUT, ...) get a JSON body too; answers from
  // the router already have one.
  http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    res.set_content(ErrorResponse(res.status, StatusText(res.status)).body, "application/json");
  });
  http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    // The path only: never the query, headers or body (a token may be there).
    std::fprintf(stderr, "memfit serve: %s %s %d\n", req.method.c_str(), req.path.c_str(), res.status);
  });
  // Every GET (and HEAD) and POST goes to the router (server/router.h).
  auto route = [impl](const httplib::Request& req, httplib::Response& res) {
    HttpRequest request{req.method, req.path, req.params, req.get_header_value("Authorization"), req.body};
    HttpResponse response = impl->router.Handle(request);
    res.status = response.status;
    res.set_content(response.body, response.content_type.c_str());
    if (response.no_cache) res.set_header("Cache-Control", "no-cache");
  };
  http.Get(R"(/.*)", route);
  http.Post(R"(/.*)", route);
}

Server::~Server() { Stop(); }

Result<int> Server::Bind() {
  auto& o = impl_->options;
  int port = o.port == 0 ? impl_->http.bind_to_any_port(o.host) 
                         : (impl_->http.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port <= 0) return MakeError("serve: cannot listen on {}:{}", o.host, o.port);
  impl_->port = port;
  return port;
}

void Server::Listen() { impl_->http.listen_after_bind(); }

void Server::Stop() { impl_->http.stop(); }

}  // namespace memfit::server
