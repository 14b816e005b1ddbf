#include "rail/peer/limits.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "rail/peer/served_budget.h"

namespace rail::peer {

namespace {

std::string FormatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

bool PositiveFinite(double value) {
  return std::isfinite(value) && value > 0;
}

// Every probe the other limits admit must fit in an empty budget, or it would be refused busy
// forever.
std::optional<std::string> ValidateServedBudget(const Limits& limits) {
  const double fraction = limits.max_served_bulk_time_fraction_per_rail;
  if (!PositiveFinite(fraction) || fraction > 1) {
    return "limits.max_served_bulk_time_fraction_per_rail must be above 0 and at most 1";
  }
  const double budget_seconds =
      fraction * std::chrono::duration<double>(kServedBudgetWindow).count();
  if (budget_seconds < limits.max_seconds_per_probe) {
    return "limits.max_served_bulk_time_fraction_per_rail gives a rail " +
           FormatNumber(budget_seconds) + " s of bulk probes an hour, less than one probe of " +
           "limits.max_seconds_per_probe (" + FormatNumber(limits.max_seconds_per_probe) + " s)";
  }
  if (limits.max_served_bytes_per_hour < limits.max_bytes_per_probe) {
    return "limits.max_served_bytes_per_hour (" + std::to_string(limits.max_served_bytes_per_hour) +
           ") is less than one probe of limits.max_bytes_per_probe (" +
           std::to_string(limits.max_bytes_per_probe) + ")";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ValidateLimits(const Limits& limits) {
  if (limits.max_frame_bytes < 256) {
    return "limits.max_frame_bytes must be at least 256 (a handshake message does not fit)";
  }
  if (limits.max_frame_bytes > std::size_t{16} << 20) {
    return "limits.max_frame_bytes must be at most 16 MiB (each session buffers one frame)";
  }
  if (limits.max_concurrent_sessions == 0) {
    return "limits.max_concurrent_sessions must be at least 1";
  }
  if (limits.max_bytes_per_probe == 0) return "limits.max_bytes_per_probe must be at least 1";
  if (!PositiveFinite(limits.max_seconds_per_probe)) {
    return "limits.max_seconds_per_probe must be a positive number";
  }
  if (!PositiveFinite(limits.probes_per_minute_per_peer)) {
    return "limits.probes_per_minute_per_peer must be a positive number";
  }
  if (limits.probe_burst_per_peer < 1) return "limits.probe_burst_per_peer must be at least 1";
  return ValidateServedBudget(limits);
}

std::optional<std::string> CheckProbeSetup(const Limits& limits, const ProbeSetup& setup) {
  if (setup.max_bytes > limits.max_bytes_per_probe) {
    return "probe would move up to " + std::to_string(setup.max_bytes) +
           " bytes; this responder allows at most " + std::to_string(limits.max_bytes_per_probe) +
           " bytes per probe";
  }
  if (!(setup.duration_seconds <= limits.max_seconds_per_probe)) {
    return "probe would last " + FormatNumber(setup.duration_seconds) +
           " s; this responder allows at most " + FormatNumber(limits.max_seconds_per_probe) +
           " s per probe";
  }
  for (std::uint64_t size : setup.message_sizes_bytes) {
    if (size > limits.max_bytes_per_probe) {
      return "message size " + std::to_string(size) + " bytes exceeds the " +
             std::to_string(limits.max_bytes_per_probe) + " bytes allowed per probe";
    }
  }
  return std::nullopt;
}

// ---- PeerRateLimiter ----

PeerRateLimiter::PeerRateLimiter(const base::Clock& clock, double per_minute, std::uint32_t burst,
                                 std::size_t max_tracked_peers)
    : clock_(clock),
      per_minute_(per_minute),
      burst_(std::max<std::uint32_t>(burst, 1)),
      emission_interval_(std::chrono::ceil<base::Duration>(
          std::chrono::duration<double>(PositiveFinite(per_minute) ? 60.0 / per_minute : 1e9))),
      tolerance_(emission_interval_ * (burst_ - 1)),
      max_tracked_peers_(std::max<std::size_t>(max_tracked_peers, 1)) {}

RateDecision PeerRateLimiter::TryAcquire(std::string_view peer) {
  const std::lock_guard lock(mutex_);
  const base::TimePoint now = clock_.Now();
  const std::string key(peer);
  const auto entry = full_again_at_.find(key);
  const bool known = entry != full_again_at_.end();
  const base::TimePoint previous = known ? entry->second : now;
  if (!known && full_again_at_.size() >= max_tracked_peers_) {
    std::erase_if(full_again_at_, [now](const auto& item) { return item.second <= now; });
    if (full_again_at_.size() >= max_tracked_peers_) {
      return {false, std::chrono::seconds(1),
              "too many peers probing at once (" + std::to_string(max_tracked_peers_) +
                  " tracked); retry later"};
    }
  }

  const base::TimePoint full_again_at = std::max(previous, now);
  if (full_again_at - now > tolerance_) {
    const base::Duration retry_after = full_again_at - now - tolerance_;
    const double seconds = std::chrono::duration<double>(retry_after).count();
    return {false, retry_after,
            "rate limit: at most " + FormatNumber(per_minute_) +
                " probes per minute per peer (burst " + std::to_string(burst_) + "); retry in " +
                FormatNumber(std::ceil(seconds * 10.0) / 10.0) + " s"};
  }
  full_again_at_[key] = full_again_at + emission_interval_;
  return {true, {}, {}};
}

std::size_t PeerRateLimiter::tracked_peers() const {
  const std::lock_guard lock(mutex_);
  return full_again_at_.size();
}

// ---- SessionSlots ----

std::optional<SessionSlots::Slot> SessionSlots::TryAcquire(const std::string& address,
                                                           Refusal* refusal) {
  const std::lock_guard lock(mutex_);
  Refusal why = Refusal::kNone;
  if (in_use_ >= max_sessions_) {
    why = Refusal::kTotal;
  } else if (max_per_address_ > 0) {
    const auto held = per_address_.find(address);
    if (held != per_address_.end() && held->second >= max_per_address_) why = Refusal::kPerAddress;
  }
  if (refusal != nullptr) *refusal = why;
  if (why != Refusal::kNone) return std::nullopt;
  ++in_use_;
  ++per_address_[address];
  return Slot(this, address);
}

std::size_t SessionSlots::in_use() const {
  const std::lock_guard lock(mutex_);
  return in_use_;
}

std::size_t SessionSlots::addresses() const {
  const std::lock_guard lock(mutex_);
  return per_address_.size();
}

void SessionSlots::Release(const std::string& address) {
  const std::lock_guard lock(mutex_);
  --in_use_;
  const auto held = per_address_.find(address);
  if (held != per_address_.end() && --held->second == 0) per_address_.erase(held);
}

}  // namespace rail::peer
