#include "rail/health/counter_history.h"

#include <iterator>

namespace rail::health {

std::uint64_t CounterHistory::Readings() const {
  std::lock_guard lock(mutex_);
  return readings_;
}

std::optional<base::TimePoint> CounterHistory::LatestReadingAt() const {
  std::lock_guard lock(mutex_);
  return latest_reading_at_;
}

bool CounterHistory::Record(std::uint64_t readings_before, base::TimePoint now,
                            const CounterReading& reading, base::Duration window) {
  std::lock_guard lock(mutex_);
  if (readings_ != readings_before) return false;
  ++readings_;
  latest_reading_at_ = now;
  for (const auto& [key, value] : reading) Observe(key, now, value, window);
  Forget(now, window);
  return true;
}

// Called with mutex_ held.
void CounterHistory::Observe(const std::string& key, base::TimePoint now, std::uint64_t value,
                             base::Duration window) {
  auto& samples = samples_[key];
  if (!samples.empty() && value < samples.back().value) samples.clear();  // reset
  if (!samples.empty() && now <= samples.back().at) {
    samples.back().value = value;  // two readings at one instant (a clock that did not move)
  } else {
    samples.push_back({now, value});
  }
  // Keep one sample at least a window before the latest: the baseline of the next delta.
  while (samples.size() > 2 && samples[1].at <= now - window) samples.pop_front();
}

std::optional<CounterDelta> CounterHistory::Delta(const std::string& key,
                                                  base::Duration window) const {
  std::lock_guard lock(mutex_);
  const auto found = samples_.find(key);
  if (found == samples_.end() || found->second.size() < 2) return std::nullopt;
  const auto& samples = found->second;
  const Sample& latest = samples.back();
  const Sample* baseline = &samples.front();
  for (auto it = samples.begin(); it != std::prev(samples.end()); ++it) {
    if (it->at <= latest.at - window) baseline = &*it;
  }
  return CounterDelta{static_cast<double>(latest.value - baseline->value),
                      latest.at - baseline->at};
}

void CounterHistory::Forget(base::TimePoint now, base::Duration window) {
  if (now - last_forget_ < window) return;
  last_forget_ = now;
  for (auto it = samples_.begin(); it != samples_.end();) {
    const bool stale = it->second.empty() || it->second.back().at < now - 10 * window;
    it = stale ? samples_.erase(it) : std::next(it);
  }
}

}  // namespace rail::health
