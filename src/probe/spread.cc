#include "rail/probe/spread.h"

#include <algorithm>
#include <cmath>
#include <iterator>
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

IntervalRecorder::IntervalRecorder(Clock::time_point start, std::chrono::nanoseconds duration,
                                   std::uint64_t completion_bytes)
    : start_(start),
      spacing_(std::max<std::chrono::nanoseconds>(duration / 1000, std::chrono::milliseconds(1))),
      completion_bytes_(std::max<std::uint64_t>(completion_bytes, 1)) {}

void IntervalRecorder::Observe(Clock::time_point now, std::uint64_t bytes_so_far) {
  if (readings_.empty() || now - last_kept_ >= spacing_) {
    readings_.emplace_back(now, bytes_so_far);
    last_kept_ = now;
  } else {
    // Within a spacing of the last kept reading: the latest replaces it.
    readings_.back() = {now, bytes_so_far};
  }
}

std::size_t IntervalRecorder::Intervals() const {
  if (readings_.empty()) return 0;
  const std::uint64_t completions = readings_.back().second / completion_bytes_;
  return static_cast<std::size_t>(
      std::min<std::uint64_t>(kMaxSpreadIntervals, completions / kMinCompletionsPerInterval));
}

std::uint64_t IntervalRecorder::BytesAt(Clock::time_point time) const {
  const auto after = std::upper_bound(
      readings_.begin(), readings_.end(), time,
      [](Clock::time_point when, const auto& reading) { return when < reading.first; });
  return after == readings_.begin() ? 0 : std::prev(after)->second;
}

std::vector<double> IntervalRecorder::Rates(std::size_t intervals) const {
  if (intervals < 2 || readings_.empty() || readings_.back().first <= start_) return {};
  const auto width = (readings_.back().first - start_) / static_cast<long>(intervals);
  const double seconds = std::chrono::duration<double>(width).count();
  std::vector<double> rates;
  std::uint64_t before = 0;
  for (std::size_t index = 1; index <= intervals; ++index) {
    const std::uint64_t bytes = index == intervals
                                    ? readings_.back().second
                                    : BytesAt(start_ + width * static_cast<long>(index));
    rates.push_back(static_cast<double>(bytes - before) / seconds);
    before = bytes;
  }
  return rates;
}

}  // namespace rail::probe
