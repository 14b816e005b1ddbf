// The spread of a bulk run: the rates of its successive intervals, so that a dashboard and a
// check can tell a noisy measurement (a rate that swung from interval to interval) from a rail
// that changed (a steady rate, lower than last time).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace rail::probe {

// A run's timed phase is cut into at most kMaxSpreadIntervals equal intervals, each holding at
// least kMinCompletionsPerInterval completions (UCX messages, TCP send buffers): fewer would
// measure the completions' granularity rather than the rail (four 64 KiB messages per interval on
// a 10 Mbit/s rail swing by a quarter with one message more or less). A 2 s run of 1 MiB messages
// at 1 Gbit/s (238 completions) gets ten intervals of 200 ms.
inline constexpr std::size_t kMaxSpreadIntervals = 10;
inline constexpr std::uint64_t kMinCompletionsPerInterval = 8;

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

// The interval-wise sum of several rails' rates measured at once (multirail_capacity), each cut
// into the same number of intervals: as long as the shortest.
std::vector<double> SumIntervalRates(const std::vector<std::vector<double>>& rails);

// Keeps (time, bytes completed) readings of a timed phase as the bytes complete, and cuts the
// phase into intervals at the end. Observe is called from the transfer's loop; it keeps at most
// about a thousand readings (one per thousandth of the duration, at least 1 ms apart).
class IntervalRecorder {
 public:
  using Clock = std::chrono::steady_clock;
  IntervalRecorder() = default;
  // `completion_bytes`: what one completion adds (a UCX message, a TCP send buffer).
  IntervalRecorder(Clock::time_point start, std::chrono::nanoseconds duration,
                   std::uint64_t completion_bytes);
  void Observe(Clock::time_point now, std::uint64_t bytes_so_far);
  // How many intervals the completions allow: at most kMaxSpreadIntervals, each with at least
  // kMinCompletionsPerInterval completions; 0 or 1 means no spread can be told.
  std::size_t Intervals() const;
  // The rates of `intervals` equal intervals from the start to the last reading, bytes per
  // second; empty when `intervals` is below 2 or nothing was read.
  std::vector<double> Rates(std::size_t intervals) const;
  std::vector<double> Rates() const { return Rates(Intervals()); }

 private:
  // The bytes completed by `time`: the latest reading at or before it.
  std::uint64_t BytesAt(Clock::time_point time) const;

  Clock::time_point start_;
  std::chrono::nanoseconds spacing_{0};
  std::uint64_t completion_bytes_ = 1;
  Clock::time_point last_kept_;
  std::vector<std::pair<Clock::time_point, std::uint64_t>> readings_;
};

}  // namespace rail::probe
