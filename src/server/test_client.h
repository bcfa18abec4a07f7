#pragma once
// A raw loopback TCP client for the server's transport tests: it sends exactly the bytes a test
// names (slow, partial, oversized requests) and reads with a socket timeout, which is the tests'
// failure condition. Any 127.x.y.z works as a source address on Linux, so a test can play many
// clients without meeting the per-address cap.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>

namespace memfit::server::socket_test {

class TestClient {
 public:
  // Connects to 127.0.0.1:`port` from `source` (an IPv4 loopback address); valid() says whether
  // it worked. Reads time out after `timeout_s`.
  TestClient(int port, const std::string& source = "127.0.0.1", int timeout_s = 5) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return;
    timeval tv{.tv_sec = timeout_s, .tv_usec = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
        ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      Close();
    }
  }
  ~TestClient() { Close(); }
  TestClient(TestClient&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool Send(const std::string& bytes) {
    size_t sent = 0;
    while (fd_ >= 0 && sent < bytes.size()) {
      ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return fd_ >= 0;
  }

  // One response (headers, then Content-Length bytes of body; none for `head`), or nullopt when
  // the connection closed or the read timed out first.
  std::optional<std::string> ReadResponse(bool head = false) {
    std::string data;
    for (;;) {
      const size_t end = data.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t length = 0;
        const size_t at = Lowercase(data.substr(0, end)).find("content-length:");
        if (at != std::string::npos) length = std::stoul(data.substr(at + 15));
        if (head) length = 0;
        if (data.size() >= end + 4 + length) return data.substr(0, end + 4 + length);
      }
      char chunk[4096];
      ssize_t n = fd_ < 0 ? -1 : ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return std::nullopt;
      data.append(chunk, static_cast<size_t>(n));
    }
  }

  // Whether the server closed the connection (end of stream or reset) before the read timeout;
  // bytes it sends first (an error answer) are skipped.
  bool ClosedByServer() {
    char chunk[4096];
    for (;;) {
      ssize_t n = fd_ < 0 ? 0 : ::recv(fd_, chunk, sizeof chunk, 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  static std::string Lowercase(std::string s) {
    for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return s;
  }

  int fd_ = -1;
};

// The status of an HTTP response's first line ("HTTP/1.1 200 OK" -> 200), or 0.
inline int StatusOf(const std::optional<std::string>& response) {
  if (!response || response->size() < 12 || !response->starts_with("HTTP/1.")) return 0;
  return std::stoi(response->substr(9, 3));
}

// The body after the blank line.
inline std::string BodyOf(const std::string& response) {
  const size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? std::string() : response.substr(end + 4);
}

}  // namespace memfit::server::socket_test
