#include "rail/probe/figures.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rail::probe {
namespace {

std::string Gbits(double bytes_per_second) {
  return fmt::format("{:.3g} Gbit/s", bytes_per_second * 8 / 1e9);
}

const ProbeRail* FindRail(const std::vector<ProbeRail>& rails, const std::string& name) {
  const auto rail = std::find_if(rails.begin(), rails.end(), [&](const ProbeRail& candidate) {
    return candidate.name == name;
  });
  return rail == rails.end() ? nullptr : &*rail;
}

// A multi-rail capacity run's bytes are its rails' bytes; nothing else may be counted in them.
void CheckRailBytesSum(const ProbeResult& result, std::vector<FigureProblem>& out) {
  if (result.per_rail.empty()) return;
  const std::uint64_t sum = std::accumulate(
      result.per_rail.begin(), result.per_rail.end(), std::uint64_t{0},
      [](std::uint64_t total, const RailThroughput& rail) { return total + rail.bytes; });
  if (sum == result.bytes) return;
  out.push_back({kRailBytesSum, fmt::format("the rails' bytes sum to {}, the run says it moved {}",
                                            sum, result.bytes)});
}

// The probed rails' counters must have counted the payload in the direction it went: the
// initiator transmits for put, am and TCP, and receives for get.
void CheckCounterBytes(const ProbeResult& result, bool receives, const FigureLimits& limits,
                       std::vector<FigureProblem>& out) {
  std::uint64_t counted = 0;
  std::size_t read = 0;
  for (const RailCounterDelta& delta : result.counters) {
    if (std::find(result.rails.begin(), result.rails.end(), delta.rail) == result.rails.end()) {
      continue;
    }
    counted += receives ? delta.receive_bytes : delta.transmit_bytes;
    ++read;
  }
  // Unread counters prove nothing either way: the counter evidence says what is missing.
  if (read != result.rails.size() || result.bytes == 0) return;
  const double floor = static_cast<double>(result.bytes) * (1 - limits.counter_tolerance);
  if (static_cast<double>(counted) >= floor) return;
  out.push_back(
      {kCounterBytes,
       fmt::format("the probed rails' counters {} {} bytes, the probe says it moved {}; more "
                   "than {:g}% apart (figures.counter_tolerance)",
                   receives ? "received" : "transmitted", counted, result.bytes,
                   limits.counter_tolerance * 100)});
}

void CheckLineRate(const std::string& rail_name, double bytes_per_second,
                   const std::vector<ProbeRail>& rails, const FigureLimits& limits,
                   std::vector<FigureProblem>& out) {
  const ProbeRail* rail = FindRail(rails, rail_name);
  if (rail == nullptr || !rail->line_rate) return;
  if (bytes_per_second <= *rail->line_rate * (1 + limits.line_rate_tolerance)) return;
  out.push_back({kLineRate, fmt::format("{} reached {}, above its line rate {} by more than {:g}% "
                                        "(figures.line_rate_tolerance)",
                                        rail_name, Gbits(bytes_per_second), Gbits(*rail->line_rate),
                                        limits.line_rate_tolerance * 100)});
}

void CheckLineRates(const ProbeResult& result, const std::vector<ProbeRail>& rails,
                    const FigureLimits& limits, std::vector<FigureProblem>& out) {
  if (!IsBulk(result.kind)) return;
  if (result.per_rail.empty() && result.rails.size() == 1) {
    CheckLineRate(result.rails.front(), result.throughput_bytes_per_second, rails, limits, out);
  }
  for (const RailThroughput& rail : result.per_rail) {
    CheckLineRate(rail.rail, rail.bytes_per_second, rails, limits, out);
  }
  if (result.kind != ProbeKind::kUcxMultirailThroughput) return;
  // UCX's striping over every rail cannot beat the rails' line rates together.
  double together = 0;
  for (const std::string& name : result.rails) {
    const ProbeRail* rail = FindRail(rails, name);
    if (rail == nullptr || !rail->line_rate) return;
    together += *rail->line_rate;
  }
  if (result.throughput_bytes_per_second <= together * (1 + limits.line_rate_tolerance)) return;
  out.push_back({kLineRate, fmt::format("the run reached {}, above its rails' line rates together "
                                        "{} by more than {:g}% (figures.line_rate_tolerance)",
                                        Gbits(result.throughput_bytes_per_second), Gbits(together),
                                        limits.line_rate_tolerance * 100)});
}

void CheckRttOrder(const ProbeResult& result, std::vector<FigureProblem>& out) {
  if (!result.rtt) return;
  const LatencySummary& rtt = *result.rtt;
  const double points[] = {rtt.min, rtt.p50, rtt.p90, rtt.p99, rtt.p999, rtt.max};
  const bool finite = std::all_of(std::begin(points), std::end(points),
                                  [](double value) { return std::isfinite(value) && value >= 0; });
  if (finite && std::is_sorted(std::begin(points), std::end(points))) return;
  out.push_back({kRttOrder, fmt::format("round trips min {:g} p50 {:g} p90 {:g} p99 {:g} p99.9 "
                                        "{:g} max {:g} s are not in order",
                                        rtt.min, rtt.p50, rtt.p90, rtt.p99, rtt.p999, rtt.max)});
}

void CheckSpread(const ProbeResult& result, std::vector<FigureProblem>& out) {
  if (!result.spread) return;
  const RateSpread& spread = *result.spread;
  const double values[] = {spread.min_bytes_per_second, spread.max_bytes_per_second,
                           spread.mean_bytes_per_second, spread.cv};
  const bool finite = std::all_of(std::begin(values), std::end(values),
                                  [](double value) { return std::isfinite(value) && value >= 0; });
  if (finite && spread.min_bytes_per_second <= spread.mean_bytes_per_second &&
      spread.mean_bytes_per_second <= spread.max_bytes_per_second) {
    return;
  }
  out.push_back({kIntervalSpread,
                 fmt::format("interval rates min {:g} mean {:g} max {:g} B/s, cv {:g}: not a "
                             "spread",
                             spread.min_bytes_per_second, spread.mean_bytes_per_second,
                             spread.max_bytes_per_second, spread.cv)});
}

}  // namespace

std::vector<FigureProblem> CheckRunFigures(const ProbeResult& result, const ProbeParams& params,
                                           const FigureLimits& limits) {
  std::vector<FigureProblem> problems;
  if (!result.success) return problems;
  CheckRailBytesSum(result, problems);
  if (IsBulk(result.kind)) {
    const bool receives =
        result.kind != ProbeKind::kTcpThroughput && params.operation == UcxOperation::kGet;
    CheckCounterBytes(result, receives, limits, problems);
  }
  CheckLineRates(result, params.rails, limits, problems);
  CheckRttOrder(result, problems);
  CheckSpread(result, problems);
  return problems;
}

bool IsNoisy(const ProbeResult& result, const FigureLimits& limits) {
  return result.spread && result.spread->cv > limits.max_interval_cv;
}

bool RunsCloseEnough(const ProbeResult& a, const ProbeResult& b, const FigureLimits& limits) {
  const auto apart =
      a.finished_at > b.finished_at ? a.finished_at - b.finished_at : b.finished_at - a.finished_at;
  return apart <= limits.ratio_max_age;
}

}  // namespace rail::probe
