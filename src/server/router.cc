#include "server/router.h"

#include <chrono>
#include <cstdlib>
#include <functional>
#include <list>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "memfit/hub.h"
#include "formats/json.h"
#include "memfit/resolve.h"
#include "api/answers.h"
#include "api/body.h"
#include "server/fifo_slots.h"
#include "server/hub_post.h"
#include "server/model_search.h"
#include "server/web_assets.h"

namespace memfit::server {
using api::ApiResponse;
using api::ErrorResponse;
using api::CheckApiBody;
using api::TypedApiWork;
using api::IsApiCommand;
using api::StatusFor;
using api::WithoutServerPaths;
namespace {

constexpr std::string_view kApiPrefix = "/api/v1/";

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

// GET models|gpus: the query as the JSON body the POST form takes.
std::string QueryBody(const HttpRequest& req) {
  nlohmann::json body = nlohmann::json::object();
  for (const auto& [key, value] : req.params) body[key] = value;
  return DumpJson(body);
}

HttpResponse FromApi(const ApiResponse& api) {
  return {api.status, api.body, "application/json", false};
}

// The command of "/api/v1/<command>" when <command> is [a-z-]+, else "".
std::string_view ApiCommand(std::string_view path) {
  if (!path.starts_with(kApiPrefix) || path.size() == kApiPrefix.size()) return {};
  std::string_view command = path.substr(kApiPrefix.size());
  for (char c : command) {
    if (!((c >= 'a' && c <= 'z') || c == '-')) return {};
  }
  return command;
}

// A string field of a JSON object, `fallback` when absent.
Result<std::string> StringField(const nlohmann::json& body, const char* key, const char* fallback) {
  auto it = body.find(key);
  if (it == body.end()) return std::string(fallback);
  if (!it->is_string()) return MakeError("\"{}\" must be a string", key);
  return it->get<std::string>();
}

}  // namespace

struct Router::Impl {
  explicit Impl(const ServerOptions& o)
      : options(o), cache(o.cache_entries), slots(o.max_concurrent_estimates), page(Page()) {
    ConfigureModelCache({.max_entries = o.model_cache_entries,
                         .max_tensors = o.model_cache_tensors,
                         .hub_ttl_ms = o.model_cache_ttl_ms});
  }

  // index.html with the GPU catalog in it (where it says <!--memfit:gpus-->): each GPU's name,
  // vendor and memory from GET /api/v1/gpus, so the page's first estimate waits for no second
  // request. "</" is written "<\/" (the same JSON string): nothing in it can close the element.
  std::string Page() {
    std::string html;
    for (const auto& asset : WebAssets()) {
      if (asset.path == "/index.html") html = std::string(asset.body);
    }
    const std::string marker = "<!--memfit:gpus-->";
    const size_t at = html.find(marker);
    if (at == std::string::npos) return html;
    ApiResponse gpus = Api("gpus", "{}", "");
    if (gpus.status != 200) return html;
    // Only what the page's GPU choices show (name, vendor, memory): a quarter of GET gpus's bytes,
    // each of which the browser parses before the first answer.
    auto full = ParseJson(gpus.body, "gpus");
    if (!full || !full->contains("gpus")) return html;
    nlohmann::json slim = {{"gpus", nlohmann::json::array()}};
    for (const auto& g : (*full)["gpus"]) {
      slim["gpus"].push_back({{"name", g.value("name", "")}, {"vendor", g.value("vendor", "")},
                              {"memory_bytes", g.value("memory_bytes", uint64_t{0})}});
    }
    const std::string dumped = slim.dump();
    std::string json;
    for (size_t i = 0; i < dumped.size(); ++i) {
      json += dumped[i];
      if (dumped[i] == '<' && i + 1 < dumped.size() && dumped[i + 1] == '/') json += '\\';
    }
    return html.replace(at, marker.size(),
                        "<script type=\"application/json\" id=\"gpu-list\">" + json + "</script>");
  }

  // An API request checked and looked up: `answer` is set for an error or a cache hit; otherwise
  // `run` is the work and `key` the cache key ("" when not cacheable).
  struct Prepared {
    std::optional<ApiResponse> answer;
    std::function<ApiResponse()> run;  // the work: the typed request's answer
    std::string key;
  };

  static Prepared Answered(ApiResponse response) {
    Prepared p;
    p.answer = std::move(response);
    return p;
  }

  // POST /api/v1/<command> (and GET models|gpus, whose query became `body_text`).
  ApiResponse Api(std::string_view command, const std::string& body_text,
                  const std::string& authorization) {
    Prepared p = PrepareApi(command, body_text, authorization);
    if (p.answer) return std::move(*p.answer);
    // Bounded uncached work: a slow Hub holds a slot, never the whole server.
    // First come, first served (FifoSlots): no request waits behind later ones.
    if (!slots.Acquire(std::chrono::seconds(30))) {
      return ErrorResponse(503, "the server is busy; try again shortly");
    }
    ApiResponse response;
    {
      FifoSlot held(slots);
      response = p.run();
    }
    if (response.status == 200 && !p.key.empty()) cache.Put(p.key, response.body);
    return response;
  }

  Prepared PrepareApi(std::string_view command, const std::string& body_text,
                      const std::string& authorization) {
    nlohmann::json body = nlohmann::json::object();
    if (!body_text.empty()) {
      // The bounded parser (64 levels, no duplicate keys; the transport bounds the size): nlohmann's own
      // accepts any nesting and keeps the last of duplicate keys.
      auto parsed = ParseJson(body_text, "request body");
      if (!parsed) return Answered(ErrorResponse(400, parsed.error().message));
      body = std::move(*parsed);
    }
    if (!body.is_object()) return Answered(ErrorResponse(400, "request body must be a JSON object"));
    // A token comes in the Authorization header (or a "token" field); it is passed to the Hub
    // client only, never logged, and requests that carry one are never cached.
    bool has_token = body.contains("token");
    if (authorization.starts_with("Bearer ") && authorization.size() > 7) {
      body["token"] = authorization.substr(7);
      has_token = true;
    }
    if (auto checked = CheckApiBody(command, body); !checked) {
      return Answered(ErrorResponse(400, checked.error().message));
    }
    auto work = TypedApiWork(command, body);
    if (!work) return Answered(ErrorResponse(StatusFor(work.error().kind), work.error().message));
    Prepared p;
    p.run = std::move(*work);
    if (!has_token) {
      p.key = std::string(command) + "\n" + DumpJson(body);
      if (auto hit = cache.Get(p.key)) p.answer = ApiResponse{200, std::move(*hit)};
    }
    return p;
  }

  // What can be answered without blocking: health, static files, errors found by checking, and
  // cached API answers; nullopt for work (an estimate, the Hub).
  std::optional<HttpResponse> Now(const HttpRequest& req) {
    if (req.method == "GET" || req.method == "HEAD") {
      if (req.path == "/api/v1/hub/models") return std::nullopt;
      if (req.path == "/api/v1/models" || req.path == "/api/v1/gpus" ||
          req.path == "/api/v1/options") {
        Prepared p = PrepareApi(req.path.substr(kApiPrefix.size()), QueryBody(req), "");
        if (!p.answer) return std::nullopt;
        return FromApi(*p.answer);
      }
      return Get(req);
    }
    if (req.method == "POST") {
      if (req.path == "/api/v1/hub/discussion" || req.path == "/api/v1/batch") return std::nullopt;
      std::string_view command = ApiCommand(req.path);
      if (command.empty()) return FromApi(ErrorResponse(404, "not found: " + req.path));
      Prepared p = PrepareApi(command, req.body, req.authorization);
      if (!p.answer) return std::nullopt;
      return FromApi(*p.answer);
    }
    return FromApi(ErrorResponse(405, "method " + req.method + " not allowed"));
  }

  // POST /api/v1/batch: {"requests": [{"command": "inference", "body": {...}}, ...]} (1 to 32),
  // each answered as POST /api/v1/<command> would be (same checks, cache and work slots), in
  // order: {"results": [{"status": 200, "body": <that answer>}, ...]}. The page's comparisons ask
  // for 8 to 16 answers at once: one round trip instead of one per answer (each answer the
  // browser receives costs it a main-thread task).
  ApiResponse Batch(const HttpRequest& req) {
    constexpr size_t kMaxRequests = 32;
    auto parsed = ParseJson(req.body, "request body");
    if (!parsed) return ErrorResponse(400, parsed.error().message);
    if (!parsed->is_object() || !parsed->contains("requests") || !(*parsed)["requests"].is_array()) {
      return ErrorResponse(400, "batch: expected {\"requests\": [{\"command\": ..., \"body\": {...}}, ...]}");
    }
    const auto& requests = (*parsed)["requests"];
    if (requests.empty() || requests.size() > kMaxRequests) {
      return ErrorResponse(400, fmt::format("batch: 1 to {} requests, not {}", kMaxRequests, requests.size()));
    }
    for (size_t i = 0; i < requests.size(); ++i) {
      const auto& r = requests[i];
      if (!r.is_object() || !r.contains("command") || !r["command"].is_string() ||
          !IsApiCommand(r["command"].get<std::string>()) || !r.contains("body") || !r["body"].is_object()) {
        return ErrorResponse(400, fmt::format("batch: request {}: expected {{\"command\": one of the API's "
                                              "commands, \"body\": an object}}", i));
      }
    }
    std::string out = "{\"results\":[";
    for (size_t i = 0; i < requests.size(); ++i) {
      ApiResponse answer = Api(requests[i]["command"].get<std::string>(), requests[i]["body"].dump(),
                               req.authorization);
      if (i) out += ',';
      out += fmt::format("{{\"status\":{},\"body\":{}}}", answer.status, answer.body);
    }
    out += "]}";
    return {200, std::move(out)};
  }

  // POST /api/v1/hub/discussion.
  ApiResponse Discussion(const HttpRequest& req) {
    auto parsed = ParseJson(req.body, "request body");
    if (!parsed) return ErrorResponse(400, parsed.error().message);
    if (!parsed->is_object()) return ErrorResponse(400, "request body must be a JSON object");
    DiscussionRequest request;
    struct Field {
      std::string* out;
      const char* key;
      const char* fallback;
    };
    const Field fields[] = {{&request.model, "model", ""},
                            {&request.revision, "revision", "main"},
                            {&request.title, "title", "[memfit] Model memory requirements"},
                            {&request.description, "description", ""}};
    for (const Field& f : fields) {
      auto value = StringField(*parsed, f.key, f.fallback);
      if (!value) return ErrorResponse(400, value.error().message);
      *f.out = std::move(*value);
    }
    // The Hub client's own reading of the environment: HF_ENDPOINT, and offline with
    // HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE (no request to the Hub at all). The token is the
    // client's (Authorization), never the server's.
    const HubSettings hub = HubSettingsFromEnvironment();
    if (hub.offline) {
      return ErrorResponse(400,
                           "post: the server runs offline (HF_HUB_OFFLINE): nothing is posted");
    }
    if (req.authorization.starts_with("Bearer ")) request.token = req.authorization.substr(7);
    const char* home = std::getenv("HOME");
    std::string record =
        std::string(home ? home : "/tmp") + "/.cache/memfit/posted-discussions.txt";
    if (const char* r = std::getenv("MEMFIT_POST_RECORD")) record = r;
    auto result = PostDiscussion(request, hub.endpoint, record);
    if (!result) {
      int status = result.error().message.find("already") != std::string::npos ? 409 : 400;
      return ErrorResponse(status, result.error().message);
    }
    return {200, DumpJson(nlohmann::json{{"url", result->url}}, -1)};
  }

  HttpResponse Get(const HttpRequest& req) {
    if (req.path == "/api/v1/health") return {200, R"({"status":"ok"})", "application/json", false};
    if (req.path == "/api/v1/hub/models") return FromApi(SearchHubModels(req.params));
    if (req.path == "/api/v1/models" || req.path == "/api/v1/gpus" ||
        req.path == "/api/v1/options") {
      return FromApi(Api(req.path.substr(kApiPrefix.size()), QueryBody(req), ""));
    }
    // Static files: only the embedded assets, by exact name; nothing on disk is ever served.
    const std::string path = req.path == "/" ? "/index.html" : req.path;
    if (path == "/index.html" && !page.empty()) return {200, page, "text/html; charset=utf-8", true};
    for (const auto& asset : WebAssets()) {
      if (asset.path == path)
        return {200, std::string(asset.body), std::string(asset.content_type), true};
    }
    return FromApi(ErrorResponse(404, "not found: " + req.path));
  }

  HttpResponse Post(const HttpRequest& req) {
    if (req.path == "/api/v1/hub/discussion") return FromApi(Discussion(req));
    if (req.path == "/api/v1/batch") return FromApi(Batch(req));
    if (std::string_view command = ApiCommand(req.path); !command.empty()) {
      return FromApi(Api(command, req.body, req.authorization));
    }
    return FromApi(ErrorResponse(404, "not found: " + req.path));
  }

  ServerOptions options;
  ResponseCache cache;
  FifoSlots slots;
  const std::string page;  // index.html with the GPU list (Page)
};

Router::Router(const ServerOptions& options) : impl_(std::make_unique<Impl>(options)) {}
Router::~Router() = default;

std::optional<HttpResponse> Router::AnswerNow(const HttpRequest& request) {
  return impl_->Now(request);
}

void Router::Warm() {
  for (const char* path : {"/api/v1/models", "/api/v1/gpus", "/api/v1/options"}) {
    HttpRequest request;
    request.method = "GET";
    request.path = path;
    (void)Handle(request);
  }
}

HttpResponse Router::Handle(const HttpRequest& request) {
  if (request.method == "GET" || request.method == "HEAD") return impl_->Get(request);
  if (request.method == "POST") return impl_->Post(request);
  return FromApi(ErrorResponse(405, "method " + request.method + " not allowed"));
}

}  // namespace memfit::server
