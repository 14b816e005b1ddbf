// The spread of a bulk run: the rates of its successive intervals, so that a dashboard and a
// check can tell a noisy measurement (a rate that swung from interval to interval) from a rail
// that changed (a steady rate, lower than last time).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace rail::probe {

// A run's timed phase is cut into this many intervals, each at least kMinInterval long: a 2 s run
// gives ten rates of 200 ms, enough for a spread, each long enough to hold several completions
// of a 1 MiB message on a 1 Gbit/s rail (8 ms each).
inline constexpr std::size_t kSpreadIntervals = 10;
inline constexpr std::chrono::milliseconds kMinSpreadInterval{50};

struct RateSpread {
  std::size_t intervals = 0;  // whole intervals measured
  double min_bytes_per_second = 0;
  double max_bytes_per_second = 0;
  double mean_bytes_per_second = 0;
  // Coefficient of variation: the rates' standard deviation over their mean (0 when the mean is).
  double cv = 0;
  bool operator==(const RateSpread&) const = default;
};

// The spread of `rates` (bytes per second, one per interval); nullopt with fewer than two.
std::optional<RateSpread> SpreadOf(const std::vector<double>& rates);

// The interval-wise sum of several rails' rates measured at once (multirail_capacity): as long
// as the shortest.
std::vector<double> SumIntervalRates(const std::vector<std::vector<double>>& rails);

// Cuts a timed phase into intervals as the bytes complete. Observe is called from the transfer's
// loop with the bytes completed so far; it costs a comparison until an interval ends.
class IntervalRecorder {
 public:
  using Clock = std::chrono::steady_clock;
  IntervalRecorder(Clock::time_point start, std::chrono::nanoseconds duration);
  void Observe(Clock::time_point now, std::uint64_t bytes_so_far);
  // Rates of the whole intervals observed (a partial last one is left out).
  const std::vector<double>& rates() const { return rates_; }

 private:
  std::chrono::nanoseconds interval_;
  Clock::time_point interval_start_;
  std::uint64_t bytes_at_interval_start_ = 0;
  std::vector<double> rates_;
};

}  // namespace rail::probe
