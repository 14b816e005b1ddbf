// Summaries of one probe run's latency samples, and the bucket layout of the RTT histograms.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rail::probe {

// Percentiles by the nearest-rank method: the p-th percentile of N samples sorted ascending is
// the sample at rank ceil(p / 100 * N) (1-based), so every reported value is a real sample (no
// interpolation invents a latency nobody measured), p50 of {1, 2, 3, 4} is 2, and with one sample
// every percentile is that sample. p99.9 needs 1000 samples before it differs from max.
double NearestRankPercentile(std::span<const double> sorted_samples, double percentile);

struct LatencySummary {
  std::size_t count = 0;
  double min = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double p999 = 0;
  double max = 0;
};

// Summarises samples (seconds, any order). NaNs are dropped: a sample that failed to measure is
// not a latency. nullopt when no sample is left.
std::optional<LatencySummary> Summarise(std::vector<double> samples);

// As Summarise, without a copy: drops the NaNs from `samples` and sorts it. A second's RTT probe
// takes ~100,000 samples; a copy of them per run is megabytes the agent need not touch.
std::optional<LatencySummary> SummariseInPlace(std::vector<double>& samples);

// Upper bounds of exponential histogram buckets: first, first * factor, first * factor^2, ...
// while below `max`, then `max` itself (so the last ratio is <= factor too); +Inf is implicit, as
// in Prometheus. Empty, with `error` set, unless 0 < first < max and 1 < factor <= 1.5: coarser
// buckets would hide the difference between a healthy and a sick rail.
std::vector<double> ExponentialBuckets(double first, double factor, double max, std::string* error);

// The RTT histograms' layout: 1 µs growing by 1.5x up to `max_seconds` (default 10 s).
std::vector<double> RttBuckets(double max_seconds = 10.0);

}  // namespace rail::probe
