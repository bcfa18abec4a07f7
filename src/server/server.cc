#include "server/server.h"

#include <chrono>
#include <cstdio>
#include <list>
#include <mutex>
#include <semaphore>
#include <unordered_map>

#include <httplib.h>

#include "memfit/json.h"
#include "server/api.h"
#include "server/hub_post.h"
#include "server/web_assets.h"

namespace memfit::server {
namespace {

// A small LRU of successful API responses, keyed by command and canonical request.
class ResponseCache {
 public:
  explicit ResponseCache(size_t capacity) : capacity_(capacity) {}
  std::optional<std::string> Get(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return std::nullopt;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }
  void Put(const std::string& key, std::string value) {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    order_.emplace_front(key, std::move(value));
    index_[key] = order_.begin();
    while (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

 private:
  size_t capacity_;
  std::mutex mutex_;
  std::list<std::pair<std::string, std::string>> order_;
  std::unordered_map<std::string, std::list<std::pair<std::string, std::string>>::iterator> index_;
};

void SendJson(httplib::Response& res, const ApiResponse& api) {
  res.status = api.status;
  res.set_content(api.body, "application/json");
}

}  // namespace

struct Server::Impl {
  explicit Impl(ServerOptions o)
      : options(std::move(o)), cache(options.cache_entries), slots(options.max_concurrent_estimates) {}

  ApiResponse Handle(std::string_view command, const std::string& body_text,
                     const std::string& authorization) {
    nlohmann::json body;
    if (body_text.empty()) {
      body = nlohmann::json::object();
    } else {
      try {
        body = nlohmann::json::parse(body_text);
      } catch (const std::exception&) {
        return ErrorResponse(400, "request body is not valid JSON");
      }
    }
    if (!body.is_object()) return ErrorResponse(400, "request body must be a JSON object");
    // A token comes in the Authorization header (or a "token" field); it is passed to the Hub
    // client only, never logged, and requests that carry one are never cached.
    bool has_token = body.contains("token");
    if (authorization.starts_with("Bearer ") && authorization.size() > 7) {
      body["token"] = authorization.substr(7);
      has_token = true;
    }
    auto args = ApiArguments(command, body);
    if (!args) return ErrorResponse(400, args.error().message);
    std::string key;
    if (!has_token) {
      key = std::string(command) + "\n" + DumpJson(body);
      if (auto hit = cache.Get(key)) return {200, *hit};
    }
    // Bounded uncached work: a slow Hub holds a slot, never the whole server.
    if (!slots.try_acquire_for(std::chrono::seconds(30))) {
      return ErrorResponse(503, "the server is busy; try again shortly");
    }
    ApiResponse response = RunApiCommand(*args);
    slots.release();
    if (response.status == 200 && !has_token) cache.Put(key, response.body);
    return response;
  }

  ServerOptions options;
  ResponseCache cache;
  std::counting_semaphore<1024> slots;
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
    SendJson(res, ErrorResponse(500, "internal error"));
  });
  http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    // The path only: never the query, headers or body (a token may be there).
    std::fprintf(stderr, "memfit serve: %s %s %d\n", req.method.c_str(), req.path.c_str(), res.status);
  });
  http.Get("/api/v1/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"ok"})", "application/json");
  });
  http.Post("/api/v1/hub/discussion", [](const httplib::Request& req, httplib::Response& res) {
    DiscussionRequest request;
    try {
      auto body = nlohmann::json::parse(req.body);
      request.model = body.value("model", "");
      request.revision = body.value("revision", "main");
      request.title = body.value("title", "[memfit] Model memory requirements");
      request.description = body.value("description", "");
    } catch (const std::exception&) {
      return SendJson(res, ErrorResponse(400, "request body is not valid JSON"));
    }
    std::string auth = req.get_header_value("Authorization");
    if (auth.starts_with("Bearer ")) request.token = auth.substr(7);
    const char* endpoint = std::getenv("HF_ENDPOINT");
    const char* home = std::getenv("HOME");
    std::string record = std::string(home ? home : "/tmp") + "/.cache/memfit/posted-discussions.txt";
    if (const char* r = std::getenv("MEMFIT_POST_RECORD")) record = r;
    auto result = PostDiscussion(request, endpoint && *endpoint ? endpoint : "https://huggingface.co", record);
    if (!result) {
      int status = result.error().message.find("already") != std::string::npos ? 409 : 400;
      return SendJson(res, ErrorResponse(status, result.error().message));
    }
    SendJson(res, {200, nlohmann::json{{"url", result->url}}.dump()});
  });
  http.Post(R"(/api/v1/([a-z-]+))", [impl](const httplib::Request& req, httplib::Response& res) {
    SendJson(res, impl->Handle(req.matches[1].str(), req.body, req.get_header_value("Authorization")));
  });
  http.Get(R"(/api/v1/(models|gpus))", [impl](const httplib::Request& req, httplib::Response& res) {
    nlohmann::json body = nlohmann::json::object();
    for (const auto& [key, value] : req.params) body[key] = value;
    SendJson(res, impl->Handle(req.matches[1].str(), DumpJson(body), ""));
  });
  // Static files: only the embedded assets, by exact name; nothing on disk is ever served.
  http.Get(R"(/.*)", [](const httplib::Request& req, httplib::Response& res) {
    std::string path = req.path == "/" ? "/index.html" : req.path;
    for (const auto& asset : WebAssets()) {
      if (asset.path == path) {
        res.set_content(std::string(asset.body), std::string(asset.content_type).c_str());
        res.set_header("Cache-Control", "no-cache");
        return;
      }
    }
    SendJson(res, ErrorResponse(404, "not found: " + req.path));
  });
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
