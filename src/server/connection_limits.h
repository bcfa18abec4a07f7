#pragma once
// How many connections are open, in total and per client address, and the counters behind
// ServerStats. The listener asks for an Admission before it reads a byte; a connection over
// either cap is closed at once and counted.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "server/server.h"

namespace memfit::server {

class ConnectionLimits : public std::enable_shared_from_this<ConnectionLimits> {
 public:
  // Caps below 1 are read as 1.
  ConnectionLimits(int max_total, int max_per_address);

  // Held by one open connection; gives its place back when destroyed.
  class Admission {
   public:
    Admission(std::shared_ptr<ConnectionLimits> limits, std::string address);
    ~Admission();
    Admission(const Admission&) = delete;
    Admission& operator=(const Admission&) = delete;

   private:
    std::shared_ptr<ConnectionLimits> limits_;
    std::string address_;
  };

  // A place for one more connection from `address` (an IP in text), or null when either cap is
  // reached (counted as refused).
  std::unique_ptr<Admission> Admit(const std::string& address);

  void CountTimeout() { timed_out_.fetch_add(1, std::memory_order_relaxed); }
  void CountBusy() { busy_.fetch_add(1, std::memory_order_relaxed); }
  ServerStats Stats() const;

 private:
  void Release(const std::string& address);

  const uint64_t max_total_;
  const uint64_t max_per_address_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, uint64_t> per_address_;
  uint64_t open_ = 0;
  uint64_t accepted_ = 0;
  uint64_t refused_ = 0;
  std::atomic<uint64_t> timed_out_{0};
  std::atomic<uint64_t> busy_{0};
};

// File descriptors kept back from connections: the listener, the Hub client's sockets, files.
inline constexpr uint64_t kReservedDescriptors = 256;

// The connection cap that `descriptor_limit` open files allow: `wanted`, or fewer when the
// descriptors would run out first (then accept() fails and nobody, health checks included, gets
// in until a connection closes). At least 1.
int ConnectionCapForDescriptors(int wanted, uint64_t descriptor_limit);

// Raises the process's soft RLIMIT_NOFILE to its hard limit (Debian's default soft limit, 1,024,
// is below the default cap of 4,096 connections); returns the soft limit in force.
uint64_t RaiseDescriptorLimit();

}  // namespace memfit::server
