#pragma once
// One client connection's state machine (Boost.Beast), all of it on the connection's strand:
//   wait for a request's first byte    (idle_timeout_s: a new or kept-alive connection)
//   read the headers and the body      (request_timeout_s from the first byte, both together;
//                                        max_header_bytes -> 431, max_body_bytes -> 413)
//   hand the request to the worker pool (full queue -> 503) and wait without a timer
//   write the response                 (write_timeout_s), then the next request or a close.
// An answer the transport gives itself (400, 413, 431, 503) carries the router's {"error": ...}
// body. A timeout closes the connection. A close after an error answer drains what the client
// is still sending for a moment first, so that it reads the answer instead of a reset.

#include <boost/asio/ip/tcp.hpp>
#include <memory>

#include "server/connection_limits.h"
#include "server/router.h"
#include "server/worker_pool.h"

namespace memfit::server {

// What every connection shares; owned by the server, which outlives its connections.
struct ConnectionContext {
  const ServerOptions& options;
  Router& router;
  WorkerPool& pool;
  ConnectionLimits& limits;
};

// Starts serving `socket` (whose executor should be a strand); the connection keeps itself alive
// until it closes, or until its io_context is destroyed.
void StartConnection(boost::asio::ip::tcp::socket socket,
                     std::unique_ptr<ConnectionLimits::Admission> admission,
                     const ConnectionContext& context);

// The reason phrase of a status the transport answers itself, for its {"error": ...} body.
std::string_view StatusText(int status);

}  // namespace memfit::server
