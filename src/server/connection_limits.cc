#include "server/connection_limits.h"

#include <sys/resource.h>

#include <algorithm>

namespace memfit::server {

ConnectionLimits::ConnectionLimits(int max_total, int max_per_address)
    : max_total_(static_cast<uint64_t>(std::max(1, max_total))),
      max_per_address_(static_cast<uint64_t>(std::max(1, max_per_address))) {}

ConnectionLimits::Admission::Admission(std::shared_ptr<ConnectionLimits> limits,
                                       std::string address)
    : limits_(std::move(limits)), address_(std::move(address)) {}

ConnectionLimits::Admission::~Admission() { limits_->Release(address_); }

std::unique_ptr<ConnectionLimits::Admission> ConnectionLimits::Admit(const std::string& address) {
  {
    std::lock_guard lock(mutex_);
    uint64_t& from_address = per_address_[address];
    if (open_ >= max_total_ || from_address >= max_per_address_) {
      if (from_address == 0) per_address_.erase(address);
      ++refused_;
      return nullptr;
    }
    ++from_address;
    ++open_;
    ++accepted_;
  }
  return std::make_unique<Admission>(shared_from_this(), address);
}

void ConnectionLimits::Release(const std::string& address) {
  std::lock_guard lock(mutex_);
  auto it = per_address_.find(address);
  if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
  --open_;
}

ServerStats ConnectionLimits::Stats() const {
  std::lock_guard lock(mutex_);
  return {.open_connections = open_,
          .accepted_connections = accepted_,
          .refused_connections = refused_,
          .timed_out_connections = timed_out_.load(std::memory_order_relaxed),
          .busy_responses = busy_.load(std::memory_order_relaxed)};
}

int ConnectionCapForDescriptors(int wanted, uint64_t descriptor_limit) {
  const uint64_t available =
      descriptor_limit > kReservedDescriptors ? descriptor_limit - kReservedDescriptors : 1;
  return static_cast<int>(
      std::clamp<uint64_t>(available, 1, static_cast<uint64_t>(std::max(1, wanted))));
}

uint64_t RaiseDescriptorLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return kReservedDescriptors * 4;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(limit.rlim_cur);
}

}  // namespace memfit::server
