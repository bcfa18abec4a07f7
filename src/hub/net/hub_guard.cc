#include "hub/net/hub_guard.h"

#include <algorithm>

namespace memfit {

std::optional<Error> HubGuard::Blocked(const std::string& endpoint, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto it = outages_.find(endpoint);
  if (it == outages_.end()) return std::nullopt;
  Outage& o = it->second;
  if (now >= o.retry_at && !o.probing) {
    // The window is over: this lookup probes; the others keep failing fast until it is answered.
    o.probing = true;
    return std::nullopt;
  }
  // The remembered error as it was: the answer does not depend on whether this lookup or an
  // earlier one met the outage (the CLI, the API and validate give the same JSON).
  return o.why;
}

void HubGuard::RecordOutage(const std::string& endpoint, const Error& why, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = outages_.try_emplace(endpoint);
  Outage& o = it->second;
  o.why = why;
  o.backoff_ms = inserted ? options_.first_backoff_ms
                          : std::min(options_.max_backoff_ms, std::max<uint32_t>(1, o.backoff_ms) * 2);
  o.retry_at = now + std::chrono::milliseconds(o.backoff_ms);
  o.probing = false;
}

void HubGuard::RecordAnswer(const std::string& endpoint) {
  std::lock_guard lock(mutex_);
  outages_.erase(endpoint);
}

void HubGuard::Clear() {
  std::lock_guard lock(mutex_);
  outages_.clear();
}

HubOutcome HubGuard::Shared(const std::string& key, const std::function<HubOutcome()>& work,
                            bool* shared) {
  std::shared_ptr<Flight> flight;
  bool leader = false;
  {
    std::unique_lock lock(mutex_);
    auto [it, inserted] = flights_.try_emplace(key);
    if (inserted) it->second = std::make_shared<Flight>();
    flight = it->second;
    leader = inserted;
    if (!leader) {
      flight->cv.wait(lock, [&] { return flight->done; });
      if (shared) *shared = true;
      return *flight->result;
    }
  }
  if (shared) *shared = false;
  std::optional<HubOutcome> result;
  try {
    result.emplace(work());
  } catch (...) {
    // Never leave followers waiting on a flight that will not land.
    std::lock_guard lock(mutex_);
    flight->result.emplace(HubOutcome{MakeError("the Hub lookup failed"), HubFailure::kOther});
    flight->done = true;
    flights_.erase(key);
    flight->cv.notify_all();
    throw;
  }
  std::lock_guard lock(mutex_);
  flight->result = result;
  flight->done = true;
  flights_.erase(key);
  flight->cv.notify_all();
  return std::move(*result);
}

HubGuard& DefaultHubGuard() {
  static HubGuard guard;
  return guard;
}

}  // namespace memfit
