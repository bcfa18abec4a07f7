#include "server/connection.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "api/body.h"
#include "server/request_target.h"

namespace memfit::server {
using api::ErrorResponse;
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr size_t kFirstReadBytes = 4096;
// After an error answer: how long and how much of the client's unread request to drain.
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr size_t kLingerBytes = 1 << 20;

std::string_view View(beast::string_view s) { return {s.data(), s.size()}; }

// Any error of Beast's HTTP parser (a malformed request), as opposed to the socket's.
bool IsParseError(beast::error_code ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category() &&
         ec != http::error::end_of_stream && ec != http::error::partial_message;
}

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, std::unique_ptr<ConnectionLimits::Admission> admission,
             const ConnectionContext& context)
      : stream_(std::move(socket)), admission_(std::move(admission)), context_(context) {}

  void Start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadRequest(); });
  }

 private:
  using Request = http::request<http::string_body>;

  std::chrono::seconds Seconds(int s) const { return std::chrono::seconds(s > 0 ? s : 1); }

  // Waits (idle_timeout_s) for the first byte of the next request, unless one already arrived.
  void ReadRequest() {
    method_ = "-";
    path_ = "-";
    if (buffer_.size() > 0) return ReadHeader();
    stream_.expires_after(Seconds(context_.options.idle_timeout_s));
    stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->buffer_.commit(n);
                              if (ec) return self->Fail(ec);
                              self->ReadHeader();
                            });
  }

  // The headers, then the body: one deadline for both, from the first byte.
  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(context_.options.max_header_bytes));
    parser_->body_limit(context_.options.max_body_bytes);
    stream_.expires_after(Seconds(context_.options.request_timeout_s));
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (!ec || ec == http::error::body_limit) {  // the request line was read
      const Request& req = parser_->get();
      method_ = std::string(View(req.method_string()));
      target_ = ParseRequestTarget(View(req.target()));
      path_ = target_.path;
    }
    if (ec) return Fail(ec);
    if (parser_->is_done()) return Dispatch();
    if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      continue_.emplace(http::status::continue_, parser_->get().version());
      http::async_write(stream_, *continue_,
                        [self = shared_from_this()](beast::error_code ec, size_t) {
                          if (ec) return self->Fail(ec);
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->Fail(ec);
                       self->Dispatch();
                     });
  }

  // A read failed: a timeout or the client's close ends the connection quietly; a request the
  // parser refuses is answered, then the connection closes.
  void Fail(beast::error_code ec) {
    if (ec == beast::error::timeout) {
      context_.limits.CountTimeout();
      return Close();
    }
    if (ec == http::error::header_limit) return Answer(Transport(431), /*keep_alive=*/false);
    if (ec == http::error::body_limit) return Answer(Transport(413), false);
    if (IsParseError(ec)) return Answer(Transport(400), false);
    Close();
  }

  static HttpResponse Transport(int status) {
    return {status, ErrorResponse(status, StatusText(status)).body, "application/json", false};
  }

  // Hands the request to a worker; the router never runs on an io thread.
  void Dispatch() {
    Request req = parser_->release();
    parser_.reset();
    head_ = req.method() == http::verb::head;
    version_ = req.version();
    const bool keep_alive = req.keep_alive();
    HttpRequest request{.method = method_,
                        .path = std::move(target_.path),
                        .params = std::move(target_.params),
                        .authorization = std::string(View(req[http::field::authorization])),
                        .body = std::move(req.body())};
    // Health, static files and cached answers need no worker: answered here, on the io thread.
    std::optional<HttpResponse> now;
    try {
      now = context_.router.AnswerNow(request);
    } catch (const std::exception&) {
      now = Transport(500);
    }
    if (now) return Answer(std::move(*now), keep_alive);
    stream_.expires_never();  // the worker's time is the router's to bound (Hub deadline)
    std::function<void()> task = [self = shared_from_this(), request = std::move(request),
                                  keep_alive]() mutable {
      HttpResponse response;
      try {
        response = self->context_.router.Handle(request);
      } catch (const std::exception&) {
        response = Transport(500);
      }
      net::post(self->stream_.get_executor(),
                [self, response = std::move(response), keep_alive]() mutable {
                  self->Answer(std::move(response), keep_alive);
                });
    };
    if (!context_.pool.TryPost(task)) {
      context_.limits.CountBusy();
      Answer(Transport(503), keep_alive);
    }
  }

  void Answer(HttpResponse response, bool keep_alive) {
    // The path only: never the query, headers or body (a token may be there).
    std::fprintf(stderr, "memfit serve: %s %s %d\n", method_.c_str(), path_.c_str(),
                 response.status);
    response_.emplace(static_cast<http::status>(response.status), version_ ? version_ : 11);
    response_->set(http::field::content_type, response.content_type);
    if (response.no_cache) response_->set(http::field::cache_control, "no-cache");
    response_->keep_alive(keep_alive);
    response_->body() = std::move(response.body);
    response_->prepare_payload();
    if (head_) response_->body().clear();  // Content-Length stays the GET body's
    stream_.expires_after(Seconds(context_.options.write_timeout_s));
    http::async_write(stream_, *response_,
                      [self = shared_from_this(), keep_alive](beast::error_code ec, size_t) {
                        self->response_.reset();
                        if (ec == beast::error::timeout) self->context_.limits.CountTimeout();
                        if (ec) return self->Close();
                        if (!keep_alive) return self->Linger();
                        self->head_ = false;
                        self->ReadRequest();
                      });
  }

  // Half-closes, then reads and drops what the client still sends (briefly) before closing.
  void Linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLingerTime);
    Drain();
  }

  void Drain() {
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > kLingerBytes) return self->Close();
                              self->Drain();
                            });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  std::unique_ptr<ConnectionLimits::Admission> admission_;
  const ConnectionContext& context_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::empty_body>> continue_;
  std::optional<http::response<http::string_body>> response_;
  std::string method_ = "-";
  std::string path_ = "-";  // for the access log
  RequestTarget target_;
  unsigned version_ = 11;
  bool head_ = false;
  size_t drained_ = 0;
};

}  // namespace

std::string_view StatusText(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 404:
      return "not found";
    case 405:
      return "method not allowed";
    case 408:
      return "request timeout";
    case 413:
      return "request body too large";
    case 414:
      return "request URI too long";
    case 431:
      return "request headers too large";
    case 500:
      return "internal error";
    case 501:
      return "not implemented";
    case 503:
      return "the server is busy; try again shortly";
    default:
      return "request failed";
  }
}

void StartConnection(tcp::socket socket, std::unique_ptr<ConnectionLimits::Admission> admission,
                     const ConnectionContext& context) {
  std::make_shared<Connection>(std::move(socket), std::move(admission), context)->Start();
}

}  // namespace memfit::server
