#pragma once
// What `memfit serve` answers, apart from the socket: the Beast/Asio server (server.cc,
// connection.cc) turns every request into an HttpRequest and sends back the HttpResponse;
// fuzz/server_request_fuzz.cc and the tests call Router::Handle directly. HTTP parsing (request
// line, headers, percent-decoding, Content-Length and the body size limit) stays with the
// transport.

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>

#include "server/server.h"

namespace memfit::server {

struct HttpRequest {
  std::string method;  // "GET" (the server answers HEAD with the GET route), "POST", ...
  std::string path;    // percent-decoded, without the query
  std::multimap<std::string, std::string> params;  // the decoded query
  std::string authorization;                       // the Authorization header, or ""
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  bool no_cache = false;  // "Cache-Control: no-cache" (the embedded page)
};

// Routes (docs/openapi.json): GET /api/v1/health, GET /api/v1/models|gpus (query -> options),
// POST /api/v1/<command> (JSON body -> the CLI's arguments, server/api.h), POST
// /api/v1/hub/discussion, GET of an embedded asset by exact name. Anything else is 404. Every
// non-200 answer is {"error": "<one line>"}. Thread-safe.
class Router {
 public:
  explicit Router(const ServerOptions& options);
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  HttpResponse Handle(const HttpRequest& request);
  // The same answer when it needs no work (health, static files, request errors, cached API
  // answers), so the transport can give it without handing the request to a worker; nullopt
  // when Handle must run.
  std::optional<HttpResponse> AnswerNow(const HttpRequest& request);
  // Computes the answers every page load asks for first (the model catalog and the GPU list), so
  // that they come from the cache.
  void Warm();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace memfit::server
