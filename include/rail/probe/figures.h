// What must hold between the figures of a probe run, and between two runs whose ratio is
// published. A run that breaks one is not published as a measurement: its throughput and latency
// gauges are withheld, rail_probe_figures_withheld says which invariant it broke, and the checks
// hold back rather than judge it (docs/probes.md, "Figures you can trust"). The runner checks
// every run as it files it; the collector and the checks only read the outcome.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "rail/probe/result.h"

namespace rail::probe {

// The figures: section of the configuration; defaults here and nowhere else.
struct FigureLimits {
  // figures.striping_efficiency_tolerance: ucx_multirail_throughput may exceed multirail_capacity
  // (every rail driven at once) by this fraction, the two runs' noise; above it the capacity is
  // taken to be low, the efficiency is withheld and the capacity re-measured.
  double striping_efficiency_tolerance = 0.1;
  // figures.counter_tolerance: the probed rails' own counters (port_xmit_data, tx_bytes) may
  // count this fraction fewer bytes than the probe says it moved. They count headers too, so a
  // healthy run's counters are above its payload; below it by more, one of the two is wrong.
  double counter_tolerance = 0.05;
  // figures.line_rate_tolerance: a rail's throughput may exceed its line rate by this fraction
  // (timers' granularity); above it the run measured something else than the rail.
  double line_rate_tolerance = 0.05;
  // figures.ratio_max_age: a ratio of two runs (striping efficiency, GPU over host memory) whose
  // runs finished further apart than this is not published: the rails may have changed between.
  std::chrono::milliseconds ratio_max_age = std::chrono::minutes(10);
  // figures.max_interval_cv: a bulk run whose interval rates vary more than this (coefficient of
  // variation) was noise: probe_throughput and multirail_striping hold back rather than fail.
  double max_interval_cv = 0.25;

  bool operator==(const FigureLimits&) const = default;
};

// Invariant tokens (rail_probe_figures_withheld's `invariant` label).
inline constexpr const char* kRailBytesSum = "rail_bytes_sum";
inline constexpr const char* kCounterBytes = "counter_bytes";
inline constexpr const char* kLineRate = "line_rate";
inline constexpr const char* kRttOrder = "rtt_order";
inline constexpr const char* kIntervalSpread = "interval_spread";

// The invariants a successful run of `params` breaks, for people and by token; empty when its
// figures hold. The line rates are the params' rails' (ProbeRail::line_rate).
std::vector<FigureProblem> CheckRunFigures(const ProbeResult& result, const ProbeParams& params,
                                           const FigureLimits& limits);

// Whether the run's spread says it was noise (its interval rates' cv above the limit).
bool IsNoisy(const ProbeResult& result, const FigureLimits& limits);

// Whether two runs finished close enough together for their ratio to be published.
bool RunsCloseEnough(const ProbeResult& a, const ProbeResult& b, const FigureLimits& limits);

}  // namespace rail::probe
