#include "rail/probe/spread.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rail::probe {

std::optional<RateSpread> SpreadOf(const std::vector<double>& rates) {
  if (rates.size() < 2) return std::nullopt;
  RateSpread spread;
  spread.intervals = rates.size();
  const auto [min, max] = std::minmax_element(rates.begin(), rates.end());
  spread.min_bytes_per_second = *min;
  spread.max_bytes_per_second = *max;
  const double count = static_cast<double>(rates.size());
  spread.mean_bytes_per_second = std::accumulate(rates.begin(), rates.end(), 0.0) / count;
  double squares = 0;
  for (const double rate : rates) {
    squares += (rate - spread.mean_bytes_per_second) * (rate - spread.mean_bytes_per_second);
  }
  // The population's deviation: the intervals are the whole run, not a sample of a larger one.
  spread.cv = spread.mean_bytes_per_second > 0
                  ? std::sqrt(squares / count) / spread.mean_bytes_per_second
                  : 0;
  return spread;
}

std::vector<double> SumIntervalRates(const std::vector<std::vector<double>>& rails) {
  if (rails.empty()) return {};
  std::size_t shortest = rails.front().size();
  for (const auto& rates : rails) shortest = std::min(shortest, rates.size());
  std::vector<double> sums(shortest, 0);
  for (const auto& rates : rails) {
    for (std::size_t index = 0; index < shortest; ++index) sums[index] += rates[index];
  }
  return sums;
}

IntervalRecorder::IntervalRecorder(Clock::time_point start, std::chrono::nanoseconds duration)
    : interval_(
          std::max<std::chrono::nanoseconds>(duration / kSpreadIntervals, kMinSpreadInterval)),
      interval_start_(start) {}

void IntervalRecorder::Observe(Clock::time_point now, std::uint64_t bytes_so_far) {
  if (now - interval_start_ < interval_) return;
  const double seconds = std::chrono::duration<double>(now - interval_start_).count();
  rates_.push_back(static_cast<double>(bytes_so_far - bytes_at_interval_start_) / seconds);
  interval_start_ = now;
  bytes_at_interval_start_ = bytes_so_far;
}

}  // namespace rail::probe
