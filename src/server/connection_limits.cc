#include "server/connection_limits.h"

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

}  // namespace memfit::server
