// The fake Hub (see fake_hub.h). Every answer is streamed with a chunked content provider so
// that cpp-httplib does not apply Range on its own: the fake decides (ranges on/off, short bodies).

#include "fake_hub.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace memfit::testing {
namespace {

uint64_t Fnv(std::string_view s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string Hex(const std::string& seed, int words) {
  std::string out;
  for (int i = 0; i < words; ++i) out += fmt::format("{:016x}", Fnv(seed, static_cast<uint64_t>(i)));
  return out;
}

bool IsLfs(const std::string& path) {
  return path.ends_with(".safetensors") || path.ends_with(".gguf") || path.ends_with(".bin");
}

std::string Decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> out;
  for (size_t start = 1; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    out.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void SendError(httplib::Response& res, int status, const std::string& code, const std::string& msg) {
  res.status = status;
  if (!code.empty()) res.set_header("X-Error-Code", code);
  res.set_header("X-Error-Message", msg);
  res.set_content("{\"error\":\"" + msg + "\"}", "application/json");
}

void SendBody(httplib::Response& res, int status, std::shared_ptr<const std::string> body,
              uint64_t offset, uint64_t length, uint64_t logical_size) {
  res.status = status;
  res.set_chunked_content_provider(
      "application/octet-stream",
      [body, offset, length, logical_size](size_t sent, httplib::DataSink& sink) {
        if (sent >= length) {
          sink.done();
          return true;
        }
        size_t n = static_cast<size_t>(std::min<uint64_t>(64 << 10, length - sent));
        std::string chunk(n, '\0');
        uint64_t at = offset + sent;
        if (at < body->size()) {
          size_t have = static_cast<size_t>(std::min<uint64_t>(n, body->size() - at));
          chunk.replace(0, have, body->substr(static_cast<size_t>(at), have));
        }
        (void)logical_size;
        return sink.write(chunk.data(), chunk.size());
      });
}

}  // namespace

void WriteFiles(const std::string& dir, const std::map<std::string, std::string>& files) {
  for (const auto& [path, bytes] : files) {
    std::filesystem::path p = std::filesystem::path(dir) / path;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
  }
}

std::string FakeSha1(const std::string& seed) { return Hex(seed, 3).substr(0, 40); }
std::string FakeSha256(const std::string& seed) { return Hex(seed, 4); }

struct FakeHub::Impl {
  FakeHub* self = nullptr;
  httplib::Server hub, cdn;
  int hub_port = 0, cdn_port = 0;
  std::thread hub_thread, cdn_thread;
  mutable std::mutex mutex;
  std::map<std::string, FakeRepo> repos;
  struct Blob {
    std::shared_ptr<const std::string> bytes;
    uint64_t size = 0;
  };
  std::map<std::string, Blob> blobs;  // sha256 -> bytes (the CDN's store)
  // What the real Hub keeps beside each file rather than computing per request: its bytes, its
  // size, the git blob oid and the LFS sha256. Computed once in AddRepo.
  struct Stored {
    std::shared_ptr<const std::string> bytes;
    uint64_t size = 0;
    std::string oid;     // sha1 stand-in
    std::string sha256;  // LFS files only
  };
  std::map<std::string, std::map<std::string, Stored>> stored;  // repo id -> path -> file
  std::vector<std::string> log;
  std::vector<double> log_ms;  // arrival time of each logged request, ms since construction
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  static uint64_t SizeOf(const FakeRepo& repo, const std::string& path) {
    auto it = repo.logical_sizes.find(path);
    return it != repo.logical_sizes.end() ? it->second : repo.files.at(path).size();
  }

  // Serves bytes with or without Range, as the knobs say.
  void Serve(const httplib::Request& req, httplib::Response& res,
             std::shared_ptr<const std::string> body, uint64_t size) {
    std::string range = req.get_header_value("Range");
    if (self->ranges && range.starts_with("bytes=")) {
      auto dash = range.find('-');
      uint64_t first = std::stoull(range.substr(6, dash - 6));
      uint64_t last = std::stoull(range.substr(dash + 1));
      if (first >= size) {
        res.status = 416;
        res.set_header("Content-Range", fmt::format("bytes */{}", size));
        return;
      }
      last = std::min(last, size - 1);
      uint64_t length = last - first + 1;
      res.set_header("Content-Range", fmt::format("bytes {}-{}/{}", first, last, size));
      if (self->short_bodies) length /= 2;
      SendBody(res, 206, body, first, length, size);
      return;
    }
    SendBody(res, 200, body, 0, size, size);
  }

  bool Common(const httplib::Request& req, httplib::Response& res, bool is_cdn) {
    {
      std::lock_guard lock(mutex);
      log.push_back((is_cdn ? "cdn " : "hub ") + req.target);
      log_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    (is_cdn ? self->cdn_requests : self->hub_requests)++;
    if (int ms = self->latency_ms; ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    if (int ms = self->stall_ms; ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    if (int ms = self->slow_ms; ms > 0 && !self->slow_target.empty() &&
                                req.target.find(self->slow_target) != std::string::npos) {
      // Wait `ms`, or less once the CDN has seen `slow_until_cdn_requests` requests (0: always
      // the whole time), so a test can hold one answer back until others arrive, without timing.
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
      const int enough = self->slow_until_cdn_requests;
      while (std::chrono::steady_clock::now() < until &&
             (enough == 0 || self->cdn_requests < enough)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      std::lock_guard lock(mutex);
      self->requests_before_slow_answer = log.size();
    }
    if (self->fail_count > 0 && self->fail_count-- > 0) {
      if (self->retry_after_s >= 0) res.set_header("Retry-After", std::to_string(self->retry_after_s));
      SendError(res, self->fail_status, "", "injected failure");
      return false;
    }
    return true;
  }

  void HandleHub(const httplib::Request& req, httplib::Response& res) {
    if (!Common(req, res, false)) return;
    if (req.has_header("Authorization")) self->hub_saw_token = true;
    const bool authed = req.get_header_value("Authorization") == std::string("Bearer ") + kToken;
    std::string target = req.target;
    std::string query;
    if (auto q = target.find('?'); q != std::string::npos) {
      query = target.substr(q + 1);
      target.resize(q);
    }
    auto segs = Split(target);
    std::lock_guard lock(mutex);
    bool api = segs.size() >= 6 && segs[0] == "api" && segs[1] == "models";
    bool resolve = segs.size() >= 5 && segs[2] == "resolve";
    if (!api && !resolve) return SendError(res, 404, "", "no such route");
    std::string id = api ? segs[2] + "/" + segs[3] : segs[0] + "/" + segs[1];
    auto it = repos.find(id);
    if (it == repos.end() || (it->second.is_private && !authed)) {
      return SendError(res, 401, "RepoNotFound", "Repository Not Found for url: " + target);
    }
    const FakeRepo& repo = it->second;
    std::string rev = Decode(api ? segs[5] : segs[3]);
    if ((api && segs.size() != 6) || (api && segs[4] != "revision" && segs[4] != "tree")) {
      return SendError(res, 404, "", "bad api path (revision must be one segment)");
    }
    std::string commit = repo.refs.count(rev) ? repo.refs.at(rev) : (rev == repo.commit ? rev : "");
    if (commit.empty()) return SendError(res, 404, "RevisionNotFound", "Invalid rev id: " + rev);
    if (api && segs[4] == "revision") {
      nlohmann::json j = {{"id", id}, {"sha", commit}, {"private", repo.is_private},
                          {"gated", repo.gated ? nlohmann::json("auto") : nlohmann::json(false)}};
      j["siblings"] = nlohmann::json::array();
      for (const auto& [p, b] : repo.files) j["siblings"].push_back({{"rfilename", p}});
      res.set_content(j.dump(), "application/json");
      return;
    }
    if (api) {  // tree
      if (query.find("recursive=true") == std::string::npos) {
        return SendError(res, 400, "", "the fake expects recursive=true");
      }
      std::vector<nlohmann::json> entries;
      std::set<std::string> dirs;
      for (const auto& [p, b] : repo.files) {
        for (size_t s = p.find('/'); s != std::string::npos; s = p.find('/', s + 1)) dirs.insert(p.substr(0, s));
      }
      for (const auto& d : dirs) entries.push_back({{"type", "directory"}, {"path", d}, {"oid", FakeSha1(d)}, {"size", 0}});
      for (const auto& [p, f] : stored.at(id)) {
        nlohmann::json e = {{"type", "file"}, {"path", p}, {"size", f.size}, {"oid", f.oid}};
        if (IsLfs(p)) e["lfs"] = {{"oid", f.sha256}, {"size", f.size}, {"pointerSize", 134}};
        entries.push_back(e);
      }
      size_t start = 0;
      if (auto c = query.find("cursor="); c != std::string::npos) start = std::stoul(query.substr(c + 7));
      size_t page = self->tree_page_size ? size_t{self->tree_page_size} : entries.size();
      size_t end = std::min(entries.size(), start + page);
      nlohmann::json out = nlohmann::json::array();
      for (size_t i = start; i < end; ++i) out.push_back(entries[i]);
      if (end < entries.size()) {
        res.set_header("Link", fmt::format("<http://127.0.0.1:{}{}?recursive=true&cursor={}>; rel=\"next\"",
                                           hub_port, target, end));
      }
      res.set_content(out.dump(), "application/json");
      return;
    }
    std::string path;
    for (size_t i = 4; i < segs.size(); ++i) {
      if (!path.empty()) path += '/';
      path += Decode(segs[i]);
    }
    if (repo.gated && !authed) {
      return SendError(res, req.has_header("Authorization") ? 403 : 401, "GatedRepo",
                       "Access to model " + id + " is restricted.");
    }
    const auto& files = stored.at(id);
    auto file = files.find(path);
    if (file == files.end()) return SendError(res, 404, "EntryNotFound", path + " does not exist");
    res.set_header("X-Repo-Commit", commit);
    if (IsLfs(path)) {
      const std::string& sha = file->second.sha256;
      res.status = 302;
      res.set_header("X-Linked-Etag", "\"" + sha + "\"");
      res.set_header("X-Linked-Size", std::to_string(file->second.size));
      res.set_header("Location", fmt::format("http://127.0.0.1:{}/blob/{}?Expires=9999999999&"
                                             "Signature=fakesig&Key-Pair-Id=K",
                                             cdn_port, sha));
      return;
    }
    res.set_header("ETag", "\"" + file->second.oid + "\"");
    Serve(req, res, file->second.bytes, file->second.bytes->size());
  }

  void HandleCdn(const httplib::Request& req, httplib::Response& res) {
    if (!Common(req, res, true)) return;
    if (req.has_header("Authorization")) self->cdn_saw_authorization = true;
    if (req.target.find("Signature=") == std::string::npos) return SendError(res, 403, "", "unsigned");
    std::string target = req.target.substr(0, req.target.find('?'));
    std::shared_ptr<const std::string> body;
    uint64_t size = 0;
    {
      std::lock_guard lock(mutex);
      auto it = blobs.find(target.substr(target.rfind('/') + 1));
      if (it == blobs.end()) return SendError(res, 404, "", "no blob");
      body = it->second.bytes;
      size = it->second.size;
    }
    Serve(req, res, body, size);
  }
};

FakeHub::FakeHub() : impl_(std::make_unique<Impl>()) {
  impl_->self = this;
  for (httplib::Server* s : {&impl_->hub, &impl_->cdn}) {
    s->new_task_queue = [] { return new httplib::ThreadPool(64); };
    s->set_keep_alive_max_count(100000);
    // Without TCP_NODELAY, a chunked answer's small writes wait for the client's delayed ACK
    // (Nagle's algorithm; ~40 ms a stall on Linux loopback). The real Hub and CDN do not stall
    // like that (nginx, for one, enables tcp_nodelay on keep-alive connections by default), so a
    // fake that did would measure the fake, not the client.
    s->set_tcp_nodelay(true);
  }
  impl_->hub.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
    impl_->HandleHub(req, res);
  });
  impl_->cdn.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
    impl_->HandleCdn(req, res);
  });
  // cpp-httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, fixed when Debian built
  // the library): 32 clients connecting at once overflow it, the kernel drops their SYNs and they
  // retry after TCP's 1 s initial timeout (nstat TcpExtListenOverflows counts them). No real Hub
  // or CDN drops connections like that, so the listening sockets get a real backlog: listen() on
  // a listening socket only updates its backlog (Linux).
  for (auto [server, port] : {std::pair{&impl_->hub, &impl_->hub_port},
                              std::pair{&impl_->cdn, &impl_->cdn_port}}) {
    int fd = -1;
    server->set_socket_options([&fd](int sock) {
      httplib::default_socket_options(sock);
      fd = sock;
    });
    *port = server->bind_to_any_port("127.0.0.1");
    if (fd >= 0) ::listen(fd, 1024);
  }
  impl_->hub_thread = std::thread([this] { impl_->hub.listen_after_bind(); });
  impl_->cdn_thread = std::thread([this] { impl_->cdn.listen_after_bind(); });
  while (!impl_->hub.is_running() || !impl_->cdn.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

FakeHub::~FakeHub() {
  impl_->hub.stop();
  impl_->cdn.stop();
  impl_->hub_thread.join();
  impl_->cdn_thread.join();
}

std::string FakeHub::endpoint() const { return fmt::format("http://127.0.0.1:{}", impl_->hub_port); }

void FakeHub::AddRepo(FakeRepo repo) {
  if (!repo.refs.count("main")) repo.refs["main"] = repo.commit;
  std::map<std::string, Impl::Stored> files;
  for (const auto& [path, bytes] : repo.files) {
    Impl::Stored f{.bytes = std::make_shared<const std::string>(bytes),
                   .size = Impl::SizeOf(repo, path), .oid = FakeSha1(bytes), .sha256 = ""};
    if (IsLfs(path)) f.sha256 = FakeSha256(bytes + std::to_string(f.size));
    files.emplace(path, std::move(f));
  }
  std::lock_guard lock(impl_->mutex);
  for (const auto& [path, f] : files) {
    if (!f.sha256.empty()) impl_->blobs[f.sha256] = Impl::Blob{f.bytes, f.size};
  }
  impl_->stored[repo.id] = std::move(files);
  impl_->repos[repo.id] = std::move(repo);
}

std::vector<std::string> FakeHub::paths() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->log;
}

std::vector<std::string> FakeHub::timeline() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<std::string> out;
  for (size_t i = 0; i < impl_->log.size(); ++i) {
    out.push_back(fmt::format("{:9.1f} ms  {}", impl_->log_ms[i], impl_->log[i]));
  }
  return out;
}

void FakeHub::ClearLog() {
  std::lock_guard lock(impl_->mutex);
  impl_->log.clear();
  impl_->log_ms.clear();
  impl_->start = std::chrono::steady_clock::now();
}

}  // namespace memfit::testing
