// Fuzz target: `memfit serve`'s request handling, through the same Router::Handle the Beast
// transport calls (src/server/router.h): routing, static files, the JSON API (body -> the CLI's
// arguments -> the CLI's own command with --format json), the cache, and the Hub discussion route.
// Catalog models resolve offline, so a fuzzed body naming one goes all the way to an estimate.
//
// Input: an HTTP/1.1-like request, as text:
//   METHOD SP TARGET [SP VERSION] LF          TARGET = path [? query], percent-encoded
//   (Name: value LF)*                          Authorization is passed on; Content-Length, when
//   LF                                         shorter than what follows, truncates the body
//   body
// (CR before LF is dropped.) The path and query are decoded with the transport's own
// ParseRequestTarget (server/request_target.h); the socket, the request-line grammar and the body
// size limit stay Beast's (server/connection.cc).
//
// Environment, set once: HF_HUB_OFFLINE=1; HF_ENDPOINT pointing at a loopback sentinel that
// counts connections (any connection is a finding: no request may reach the network; a closed
// port would refuse them silently);
// HOME, HF_HOME, HF_HUB_CACHE, MEMFIT_CACHE, XDG_CACHE_HOME, MEMFIT_POST_RECORD in a fresh empty
// temporary directory (a file appearing there, or a new entry in the working directory, is a
// finding: no request may write files); HF_TOKEN and the proxies unset.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "fuzz/fuzz_support.h"
#include "api/answers.h"
#include "api/body.h"
#include "server/request_target.h"
#include "server/router.h"
#include "server/web_assets.h"

namespace memfit::fuzz {
namespace {

namespace fs = std::filesystem;

std::string Post(std::string_view path, std::string_view body,
                 std::string_view extra_headers = "") {
  return fmt::format(
      "POST {} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{}"
      "Content-Length: {}\r\n\r\n{}",
      path, extra_headers, body.size(), body);
}

std::string Get(std::string_view target, std::string_view method = "GET") {
  return fmt::format("{} {} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", method, target);
}

}  // namespace

// One realistic request per endpoint (the bodies of src/server/server_test.cc and the page's
// web/app.js), and the hostile ones the server tests check.
std::vector<std::string> Seeds() {
  std::vector<std::string> seeds = {
      Post("/api/v1/estimate-memory",
           R"({"model": "meta-llama/Llama-3.2-1B", "dtypes": ["float16", "int4"]})"),
      Post("/api/v1/estimate-memory", R"({"model": "bert-base-cased", "accelerate": true})"),
      Post("/api/v1/inspect", R"({"model": "meta-llama/Llama-3.2-1B", "depth": 2})"),
      Post(
          "/api/v1/inference",
          R"({"model": "Llama-3.2-1B", "context": 8192, "batch": 2, "quant": "bnb-nf4", "kv-dtype": "fp8", "engine": "vllm", "gpu-memory": "24GiB"})"),
      Post(
          "/api/v1/train",
          R"({"model": "Llama-3.2-1B", "method": "qlora", "optimizer": "paged-adamw-8bit", "seq": 2048, "checkpointing": "full"})"),
      Post(
          "/api/v1/fit",
          R"({"model": "Llama-3.2-1B", "gpu": ["rtx4090", "rtx4090"], "ram": "64GiB", "task": "inference"})"),
      Post("/api/v1/fit",
           R"({"model": "bert-base-cased", "gpu": "24GiB", "task": "train", "device-map": true})"),
      Post("/api/v1/models", R"({"family": "llama"})"),
      Post("/api/v1/gpus", R"({"min-memory": "24GiB", "vendor": "nvidia"})"),
      Post("/api/v1/models", R"({"family": "llama="})"),  // a value ending with '='
      Post("/api/v1/inference",
           R"({"model": "Qwen/Qwen2.5-7B-Instruct", "engine": "llama.cpp", "context": 4096})"),
      Post(
          "/api/v1/fit",
          R"({"model": "mistralai/Mixtral-8x7B-v0.1", "gpu": "80GiB", "ram": "64GiB", "dtype": "int4", "strategy": "auto", "pcie-gbps": 25.5})"),
      Post(
          "/api/v1/train",
          R"({"model": "bert-base-cased", "method": "lora", "lora-targets": ["query", "value"], "gpus": 2, "strategy": "zero3", "offload": "optimizer", "precision": "bf16-mixed"})"),
      Post("/api/v1/inspect",
           R"({"model": "gpt2", "revision": "main", "offline": true, "token": "hf_x"})"),
      Get("/api/v1/models"),
      Get("/api/v1/models?family=llama"),
      Get("/api/v1/gpus?min-memory=24GiB&vendor=nvidia"),
      Get("/api/v1/health"),
      Get("/api/v1/hub/models?search=llama"),  // the page's Hub search: offline, so a 400
      Get("/api/v1/hub/models?search=%0Aa"),
      Get("/"),
      Get("/index.html"),
      Get("/app.js", "HEAD"),
      Get("/vendor/chart.umd.js"),
      Post(
          "/api/v1/hub/discussion",
          R"({"model": "acme/tiny", "revision": "main", "title": "[memfit] Model memory requirements", "description": "| dtype | Load |"})",
          "Authorization: Bearer hf_secret\r\n"),
      // Hostile: the server tests' cases and friends.
      Post("/api/v1/estimate-memory", R"({"model": "nobody/nothing"})"),
      Post("/api/v1/estimate-memory", "{nope"),
      Post("/api/v1/estimate-memory", R"({"model": "Llama-3.2-1B", "dtypes": ["float7"]})"),
      Post("/api/v1/inspect", R"({"model": "/etc"})"),
      Post("/api/v1/inspect", R"({"model": "../../etc/passwd"})"),
      Post("/api/v1/models", R"({"export_configs": "/tmp/x"})"),
      Post("/api/v1/models", R"({"model": "--export-configs=/tmp/x"})"),
      Post("/api/v1/models", R"({"family": "--export-configs=x"})"),
      Post("/api/v1/estimate-memory", R"({"help": true})"),
      Post("/api/v1/rm-rf", "{}"),
      Post("/api/v1/fit", R"({"model": "bert-base-cased", "gpu": "", "ram": ""})"),
      Post("/api/v1/estimate-memory",
           R"({"model": "Llama-3.2-1B", "a": {"b": [[[[[[[[[[[[1]]]]]]]]]]]}})"),
      Post("/api/v1/estimate-memory", std::string(200, '[') + std::string(200, ']')),
      Post("/api/v1/estimate-memory", R"({"model": "Llama-3.2-1B", "model": "bert-base-cased"})"),
      Post("/api/v1/inference",
           R"({"model": "Llama-3.2-1B", "context": 1e309, "batch": 18446744073709551616})"),
      Post("/api/v1/estimate-memory", "{\"model\": \"Llama-3.2-1B\", \"revision\": \"\xff\xfe\"}"),
      Post("/api/v1/train",
           R"({"model": "Llama-3.2-1B", "gpus": -1, "tp": 0, "lora-rank": 99999999999})",
           "Authorization: Bearer \xff\r\n"),
      Get("/../CMakeLists.txt"),
      Get("/%2e%2e/%2e%2e/etc/passwd"),
      Get("/src/main.cc"),
      Get("/api/v1/models?family=%FF%FE&x%00y=%0a"),
      Get("/%0d%0aSet-Cookie:%20x"),
      Get("/" + std::string(3000, 'a')),
      Get("/api/v1/estimate-memory"),
      Get("/api/v1/health", "DELETE"),
      Post("/api/v1/estimate-memory", R"({"model": "Llama-3.2-1B"})", "Content-Length: 5\r\n"),
  };
  return seeds;
}

namespace {

// ---- the environment --------------------------------------------------------------------------

struct Environment {
  fs::path root;  // every directory the server may use, empty but for our own files
  fs::path cwd;
  size_t cwd_entries = 0;  // entries of the working directory before any request
  int sentinel = -1;       // the listening socket HF_ENDPOINT points at
  std::mutex mutex;
  uint64_t connections = 0;  // guarded by mutex

  // Accepts and closes every pending connection; returns the count so far.
  uint64_t Drain() {
    std::lock_guard lock(mutex);
    for (int c; (c = accept(sentinel, nullptr, nullptr)) >= 0;) {
      ++connections;
      close(c);
    }
    return connections;
  }
};

Environment& Env() {
  static Environment* env = [] {
    auto* e = new Environment;  // lives until exit (its accept thread uses it)
    char tmpl[] = "/tmp/memfit-server-fuzz-XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    e->root = tmpl;
    for (const char* dir : {"home", "hf", "hf/hub", "memfit-cache", "xdg"})
      fs::create_directories(e->root / dir);
    // The sentinel: accepts and closes, counting; a client never waits on it.
    e->sentinel = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    // A loopback address of its own (127.77.x.y, from the pid), not 127.0.0.1: on a shared machine
    // another process's client may retry a 127.0.0.1 port whose server this one reused.
    const uint32_t pid = static_cast<uint32_t>(getpid());
    addr.sin_addr.s_addr =
        htonl((127u << 24) | (77u << 16) | ((pid >> 8) & 0xff) << 8 | (1 + pid % 254));
    socklen_t len = sizeof(addr);
    if (e->sentinel < 0 ||
        bind(e->sentinel, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(e->sentinel, 64) != 0 ||
        getsockname(e->sentinel, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::fprintf(stderr, "server_request_fuzz: cannot listen on loopback\n");
      std::abort();
    }
    // A thread closes connections at once (a client must not hang on the sentinel); the check
    // after each input drains the queue too, under the same lock, so every connection is counted
    // for the input that made it.
    fcntl(e->sentinel, F_SETFL, fcntl(e->sentinel, F_GETFL) | O_NONBLOCK);
    std::thread([e] {
      while (true) {
        pollfd fd{e->sentinel, POLLIN, 0};
        if (poll(&fd, 1, 1000) > 0) e->Drain();
      }
    }).detach();
    // Self-check: the sentinel sees a connection (else the invariant below could never fire).
    {
      int c = socket(AF_INET, SOCK_STREAM, 0);
      if (c < 0 || connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) std::abort();
      close(c);
      while (e->Drain() == 0) std::this_thread::yield();
      e->connections = 0;
    }
    char host[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &addr.sin_addr, host, sizeof(host));
    const std::string endpoint = fmt::format("http://{}:{}", host, ntohs(addr.sin_port));
    setenv("HF_HUB_OFFLINE", "1", 1);
    setenv("HF_ENDPOINT", endpoint.c_str(), 1);
    setenv("HOME", (e->root / "home").c_str(), 1);
    setenv("HF_HOME", (e->root / "hf").c_str(), 1);
    setenv("HF_HUB_CACHE", (e->root / "hf/hub").c_str(), 1);
    setenv("MEMFIT_CACHE", (e->root / "memfit-cache").c_str(), 1);
    setenv("XDG_CACHE_HOME", (e->root / "xdg").c_str(), 1);
    setenv("MEMFIT_POST_RECORD", (e->root / "home/posted.txt").c_str(), 1);
    for (const char* name :
         {"HF_TOKEN", "HF_TOKEN_PATH", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_HUB_CACHE",
          "TRANSFORMERS_CACHE", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
          "all_proxy", "ALL_PROXY"}) {
      unsetenv(name);
    }
    e->cwd = fs::current_path();
    e->cwd_entries = static_cast<size_t>(
        std::distance(fs::directory_iterator(e->cwd), fs::directory_iterator{}));
    static const fs::path root = e->root;
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(root, ec);
    });
    return e;
  }();
  return *env;
}

size_t FilesUnder(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec)) ++n;
  }
  return n;
}

server::Router& TheRouter() {
  static server::Router* router = new server::Router(server::ServerOptions{});
  return *router;
}

// ---- the request ------------------------------------------------------------------------------

struct Parsed {
  server::HttpRequest request;
  std::string raw_path;  // before decoding
  std::string_view raw;  // the whole input
};

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

std::string_view Line(std::string_view& in) {
  size_t end = in.find('\n');
  std::string_view line = in.substr(0, end);
  in = end == std::string_view::npos ? std::string_view{} : in.substr(end + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

Parsed ParseRequest(std::string_view in) {
  Parsed p;
  p.raw = in;
  std::string_view line = Line(in);
  size_t sp = line.find(' ');
  p.request.method = std::string(line.substr(0, sp));
  std::string_view target = sp == std::string_view::npos ? std::string_view{} : line.substr(sp + 1);
  if (size_t v = target.rfind(" HTTP/"); v != std::string_view::npos) target = target.substr(0, v);
  size_t q = target.find('?');
  p.raw_path = std::string(target.substr(0, q));
  server::RequestTarget decoded = server::ParseRequestTarget(target);
  p.request.path = std::move(decoded.path);
  p.request.params = std::move(decoded.params);
  std::optional<uint64_t> content_length;
  bool have_auth = false;
  while (!in.empty()) {
    std::string_view header = Line(in);
    if (header.empty()) break;
    size_t colon = header.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = header.substr(0, colon), value = header.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    if (IEquals(name, "Authorization") && !have_auth) {
      p.request.authorization = std::string(value);
      have_auth = true;
    } else if (IEquals(name, "Content-Length")) {
      uint64_t n = 0;
      bool digits = !value.empty();
      for (char c : value) {
        if (c < '0' || c > '9' || n > (UINT64_MAX - 9) / 10)
          digits = false;
        else
          n = n * 10 + static_cast<uint64_t>(c - '0');
      }
      if (digits) content_length = n;
    }
  }
  p.request.body = std::string(
      content_length && *content_length < in.size() ? in.substr(0, *content_length) : in);
  return p;
}

// ---- invariants -------------------------------------------------------------------------------

bool IsApiPath(std::string_view path) { return path.starts_with("/api/v1/"); }

bool QuotesRoot(const Parsed& p) {
  constexpr std::string_view kMark = "server-fuzz-";  // in every temporary directory's name
  auto has = [&](std::string_view s) { return s.find(kMark) != std::string_view::npos; };
  if (has(p.raw) || has(p.request.path) || has(p.request.authorization)) return true;
  for (const auto& [key, value] : p.request.params) {
    if (has(key) || has(value)) return true;
  }
  auto body = nlohmann::json::parse(p.request.body, nullptr, false);
  return !body.is_discarded() &&
         has(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void CheckErrorBody(const server::HttpResponse& r) {
  Require(r.content_type == "application/json", "an error that is not application/json");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(r.body);  // strict: invalid UTF-8 throws
  } catch (const std::exception&) {
    Require(false, "an error body that is not valid JSON");
  }
  Require(j.is_object() && j.size() == 1 && j.contains("error") && j["error"].is_string(),
          "an error body that is not {\"error\": string}");
  const std::string message = j["error"].get<std::string>();
  Require(!message.empty(), "an empty error message");
  Require(message.find_first_of("\r\n") == std::string::npos, "an error message of several lines");
}

// CheckApiBody is what keeps local paths and file-writing options away from the typed requests:
// check what it accepts of any object body, whatever the router then does with it.
void CheckArguments(std::string_view command, const nlohmann::json& body) {
  auto checked = api::CheckApiBody(command, body);
  CheckResult(checked);
  if (!checked) return;
  if (auto model = body.find("model"); model != body.end()) {
    Require(model->is_string(), "a model that is not a string accepted");
    const std::string spec = model->get<std::string>();
    std::error_code ec;
    Require(!spec.empty() && spec[0] != '-' && spec[0] != '/' &&
                spec.find("..") == std::string::npos && !fs::exists(spec, ec),
            "a local path or an option accepted as the model");
  }
  for (const auto& [key, value] : body.items()) {
    std::string flag = key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    for (std::string_view refused :
         {"export-configs", "format", "output", "file", "help", "help-all", "version"}) {
      Require(flag != refused, "a refused option accepted");
    }
  }
  // What the typed request makes of it: a request or a one-line error, never a crash.
  CheckResult(api::TypedApiWork(command, body));
}

// A static answer is the embedded file of its name, except index.html, where the server puts the
// GPU list in place of <!--memfit:gpus--> (Router::Page): the rest of the file unchanged, and in
// its place one JSON script element whose text parses.
bool SameAsEmbedded(const EmbeddedFile& asset, const server::HttpResponse& r) {
  if (asset.content_type != r.content_type) return false;
  if (asset.body == r.body) return true;
  constexpr std::string_view kMarker = "<!--memfit:gpus-->";
  constexpr std::string_view kOpen = "<script type=\"application/json\" id=\"gpu-list\">";
  constexpr std::string_view kClose = "</script>";
  const std::string_view file = asset.body;
  const size_t at = file.find(kMarker);
  if (asset.path != "/index.html" || at == std::string_view::npos) return false;
  const std::string_view body = r.body;
  const std::string_view before = file.substr(0, at), after = file.substr(at + kMarker.size());
  if (body.size() < before.size() + after.size() + kOpen.size() + kClose.size()) return false;
  if (!body.starts_with(before) || !body.ends_with(after)) return false;
  std::string_view inserted = body.substr(before.size(), body.size() - before.size() - after.size());
  if (!inserted.starts_with(kOpen) || !inserted.ends_with(kClose)) return false;
  inserted = inserted.substr(kOpen.size(), inserted.size() - kOpen.size() - kClose.size());
  return inserted.find("</") == std::string_view::npos && nlohmann::json::accept(inserted);
}

void Check(const Parsed& p, const server::HttpResponse& r) {
  const auto& req = p.request;
  const bool get = req.method == "GET" || req.method == "HEAD";
  // 403 (gated), 503 (the Hub unavailable, or the server busy): StatusFor in server/api.cc.
  Require(r.status == 200 || r.status == 400 || r.status == 403 || r.status == 404 ||
              r.status == 405 || r.status == 409 || r.status == 422 || r.status == 503,
          "a status outside the documented ones (500: an internal error)");
  if (r.status != 200) {
    CheckErrorBody(r);
  } else if (get && !IsApiPath(req.path)) {
    const std::string path = req.path == "/" ? "/index.html" : req.path;
    bool found = false;
    for (const auto& asset : server::WebAssets()) {
      if (asset.path == path) found = SameAsEmbedded(asset, r);
    }
    Require(found, "a 200 static answer that is not the embedded file of that name");
  } else {
    Require(r.content_type == "application/json" && nlohmann::json::accept(r.body),
            "a 200 API answer that is not JSON");
  }
  if (req.method != "GET" && req.method != "HEAD" && req.method != "POST")
    Require(r.status == 405, "a method answered");
  if (get && req.path == "/api/v1/health")
    Require(r.status == 200 && r.body == R"({"status":"ok"})", "health");
  // Nothing the server holds is named in an answer: its directories, and no local model is served.
  // (Unless the request itself quoted them, in any encoding: errors echo the request.)
  if (r.body.find(Env().root.string()) != std::string::npos)
    Require(QuotesRoot(p), "an answer names the server's directories");
  if (r.status == 200 && req.method == "POST" && IsApiPath(req.path)) {
    auto body = nlohmann::json::parse(req.body, nullptr, false);
    if (body.is_object() && body.contains("model") && body["model"].is_string()) {
      std::error_code ec;
      Require(!fs::exists(body["model"].get<std::string>(), ec), "a local path served");
    }
  }
}

}  // namespace

void Run(std::string_view input) {
  Environment& env = Env();
  server::Router& router = TheRouter();
  const uint64_t connections = env.Drain();
  Parsed p = ParseRequest(input);
  server::HttpResponse r = router.Handle(p.request);
  static const bool trace =
      std::getenv("MEMFIT_FUZZ_TRACE") != nullptr;  // to check the seeds by eye
  if (trace) {
    std::string shown = r.body.substr(0, 160);
    std::replace(shown.begin(), shown.end(), '\n', ' ');
    std::fprintf(stderr, "%s %s -> %d %s\n", p.request.method.c_str(),
                 p.request.path.substr(0, 60).c_str(), r.status, shown.c_str());
  }
  Check(p, r);
  if (r.status == 200) {
    // Cached or not, the same request gets the same answer.
    server::HttpResponse again = router.Handle(p.request);
    Require(again.status == r.status && again.body == r.body,
            "a repeated request got another answer");
  }
  // What the transport answers without a worker is what Handle answers (a successful answer is
  // cached by now, so it can be given at once too).
  if (auto now = router.AnswerNow(p.request)) {
    Require(now->status == r.status && now->body == r.body && now->content_type == r.content_type,
            "AnswerNow differs from Handle");
  }
  if (p.request.method == "POST" && p.request.path.starts_with("/api/v1/")) {
    auto body = nlohmann::json::parse(p.request.body, nullptr, false);
    if (body.is_object()) CheckArguments(p.request.path.substr(8), body);
  }
  Require(env.Drain() == connections, "a request reached the Hub endpoint");
  Require(FilesUnder(env.root) == 0, "a request wrote a file");
  Require(static_cast<size_t>(std::distance(fs::directory_iterator(env.cwd),
                                            fs::directory_iterator{})) == env.cwd_entries,
          "a request created a file in the working directory");
}

}  // namespace memfit::fuzz
