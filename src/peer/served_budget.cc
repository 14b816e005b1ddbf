#include "rail/peer/served_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "rail/peer/bulk_gate.h"

namespace rail::peer {

namespace {

std::string Seconds(base::Duration duration) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f", std::chrono::duration<double>(duration).count());
  return text;
}

std::string Percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g%%", fraction * 100);
  return text;
}

}  // namespace

ServedProbe ServedProbeOf(const ProbeSetup& setup) {
  return ServedProbe{SplitRails(setup.rail),
                     std::chrono::duration_cast<base::Duration>(
                         std::chrono::duration<double>(setup.duration_seconds)),
                     setup.max_bytes};
}

std::optional<std::uint64_t> BytesMoved(const nlohmann::json& measured,
                                        const nlohmann::json& report) {
  std::optional<std::uint64_t> moved;
  const auto consider = [&moved](const nlohmann::json& object, const char* key) {
    const auto it = object.is_object() ? object.find(key) : object.end();
    if (it == object.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) return;
    moved = std::max(moved.value_or(0), it->get<std::uint64_t>());
  };
  consider(measured, "bytes");
  consider(report, "bytes_received");
  return moved;
}

ServedBudget::ServedBudget(const base::Clock& clock, double max_time_fraction_per_rail,
                           std::uint64_t max_bytes_per_hour, std::size_t max_entries)
    : clock_(clock),
      max_time_per_rail_(std::chrono::duration_cast<base::Duration>(
          kServedBudgetWindow * std::clamp(max_time_fraction_per_rail, 0.0, 1.0))),
      max_bytes_(max_bytes_per_hour),
      max_time_fraction_(max_time_fraction_per_rail),
      max_entries_(std::max<std::size_t>(max_entries, 1)) {}

void ServedBudget::ExpireLocked(base::TimePoint now) {
  while (!entries_.empty() && entries_.front().admitted_at + kServedBudgetWindow <= now) {
    const Entry& old = entries_.front();
    for (const std::string& rail : old.probe.rails) {
      auto it = time_by_rail_.find(rail);
      it->second -= old.probe.declared;
      if (it->second <= base::Duration::zero()) time_by_rail_.erase(it);
    }
    bytes_ -= old.probe.bytes;
    entries_.pop_front();
  }
}

base::TimePoint ServedBudget::FitsAtLocked(const ServedProbe& probe, base::TimePoint now,
                                           std::string* blocker) const {
  std::map<std::string, base::Duration> time;  // what the probe's rails hold, as entries age out
  for (const std::string& rail : probe.rails) {
    const auto it = time_by_rail_.find(rail);
    time[rail] = it == time_by_rail_.end() ? base::Duration::zero() : it->second;
  }
  std::uint64_t bytes = bytes_;
  std::size_t entries = entries_.size();
  const auto over = [&](std::string* why) {
    for (const auto& [rail, served] : time) {
      if (served + probe.declared > max_time_per_rail_) {
        if (why) {
          *why = "rail " + rail + " has served " + Seconds(served) +
                 " s of bulk probes in the last hour (this responder gives at most " +
                 Percent(max_time_fraction_) + " of a rail's time, " + Seconds(max_time_per_rail_) +
                 " s)";
        }
        return true;
      }
    }
    if (bytes + probe.bytes > max_bytes_) {
      if (why) {
        *why = "this host has served " + std::to_string(bytes) +
               " bytes of bulk probes in the last hour (at most " + std::to_string(max_bytes_) +
               " per hour)";
      }
      return true;
    }
    if (entries >= max_entries_) {
      if (why) *why = "this responder tracks at most " + std::to_string(max_entries_) + " probes";
      return true;
    }
    return false;
  };
  if (!over(blocker)) return now;
  for (const Entry& entry : entries_) {
    for (const std::string& rail : entry.probe.rails) {
      if (const auto it = time.find(rail); it != time.end()) it->second -= entry.probe.declared;
    }
    bytes -= entry.probe.bytes;
    --entries;
    if (!over(nullptr)) return entry.admitted_at + kServedBudgetWindow;
  }
  // Larger than the whole budget (ValidateLimits keeps any valid probe within it): a window on.
  return now + kServedBudgetWindow;
}

BudgetDecision ServedBudget::TryAdmit(const ServedProbe& probe) {
  const std::lock_guard lock(mutex_);
  const base::TimePoint now = clock_.Now();
  ExpireLocked(now);
  BudgetDecision decision;
  std::string blocker;
  const base::TimePoint fits_at = FitsAtLocked(probe, now, &blocker);
  if (fits_at > now) {
    decision.retry_after = fits_at - now;
    decision.error = blocker;
    return decision;
  }
  decision.allowed = true;
  decision.ticket = next_ticket_++;
  for (const std::string& rail : probe.rails) time_by_rail_[rail] += probe.declared;
  bytes_ += probe.bytes;
  entries_.push_back(Entry{decision.ticket, now, probe});
  return decision;
}

void ServedBudget::Settle(std::uint64_t ticket, std::uint64_t bytes_moved) {
  const std::lock_guard lock(mutex_);
  // Tickets grow in admission order, the entries' order.
  const auto it = std::lower_bound(
      entries_.begin(), entries_.end(), ticket,
      [](const Entry& entry, std::uint64_t wanted) { return entry.ticket < wanted; });
  if (it == entries_.end() || it->ticket != ticket || bytes_moved >= it->probe.bytes) return;
  bytes_ -= it->probe.bytes - bytes_moved;
  it->probe.bytes = bytes_moved;
}

// Sums the entries still in the window rather than expiring them: a reader changes nothing.
base::Duration ServedBudget::ServedTime(const std::string& rail) const {
  const std::lock_guard lock(mutex_);
  const base::TimePoint now = clock_.Now();
  base::Duration served{};
  for (const Entry& entry : entries_) {
    if (entry.admitted_at + kServedBudgetWindow <= now) continue;
    if (std::find(entry.probe.rails.begin(), entry.probe.rails.end(), rail) !=
        entry.probe.rails.end()) {
      served += entry.probe.declared;
    }
  }
  return served;
}

std::uint64_t ServedBudget::ServedBytes() const {
  const std::lock_guard lock(mutex_);
  const base::TimePoint now = clock_.Now();
  std::uint64_t served = 0;
  for (const Entry& entry : entries_) {
    if (entry.admitted_at + kServedBudgetWindow > now) served += entry.probe.bytes;
  }
  return served;
}

}  // namespace rail::peer
