#include "rail/probe/stats.h"

#include <algorithm>
#include <cmath>

namespace rail::probe {

double NearestRankPercentile(std::span<const double> sorted_samples, double percentile) {
  if (sorted_samples.empty()) return std::nan("");
  const auto count = static_cast<double>(sorted_samples.size());
  // p / 100 * N is a whole number more often than floating point shows (99.9 / 100 * 1000 comes
  // out as 999.0000000000001); without the tolerance ceil would step one rank too high.
  const double exact_rank = std::clamp(percentile, 0.0, 100.0) / 100.0 * count;
  const double rank = std::ceil(exact_rank - 1e-9 * std::max(1.0, exact_rank));
  const auto index = static_cast<std::size_t>(std::clamp(rank, 1.0, count)) - 1;
  return sorted_samples[index];
}

std::optional<LatencySummary> Summarise(std::vector<double> samples) {
  return SummariseInPlace(samples);
}

std::optional<LatencySummary> SummariseInPlace(std::vector<double>& samples) {
  std::erase_if(samples, [](double sample) { return std::isnan(sample); });
  if (samples.empty()) return std::nullopt;
  std::sort(samples.begin(), samples.end());
  LatencySummary summary;
  summary.count = samples.size();
  summary.min = samples.front();
  summary.p50 = NearestRankPercentile(samples, 50);
  summary.p90 = NearestRankPercentile(samples, 90);
  summary.p99 = NearestRankPercentile(samples, 99);
  summary.p999 = NearestRankPercentile(samples, 99.9);
  summary.max = samples.back();
  return summary;
}

std::vector<double> ExponentialBuckets(double first, double factor, double max,
                                       std::string* error) {
  if (!(std::isfinite(first) && first > 0)) {
    *error = "first bucket bound must be a positive number";
    return {};
  }
  if (!(std::isfinite(max) && max > first)) {
    *error = "largest bucket bound must be greater than the first";
    return {};
  }
  if (!(factor > 1.0 && factor <= 1.5)) {
    *error = "bucket growth factor must be in (1, 1.5]";
    return {};
  }
  std::vector<double> bounds;
  // Each bound from first * factor^i rather than by repeated multiplication, so rounding does not
  // accumulate over dozens of buckets.
  for (int i = 0;; ++i) {
    const double bound = first * std::pow(factor, i);
    // A bound within rounding of max is max: keep one, not two nearly equal buckets.
    if (bound >= max * (1 - 1e-12)) break;
    bounds.push_back(bound);
  }
  bounds.push_back(max);
  return bounds;
}

std::vector<double> RttBuckets(double max_seconds) {
  std::string error;
  return ExponentialBuckets(1e-6, 1.5, max_seconds, &error);
}

}  // namespace rail::probe
