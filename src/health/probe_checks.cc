// Checks derived from the latest probe results: multirail_striping, probe_throughput and
// transport_fallback. Only current, successful results count: a failed run measured nothing, and
// a stale one no longer describes the rail.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "health/check_helpers.h"

namespace rail::health::detail {
namespace {

using RailPeer = std::pair<std::string, std::string>;

std::vector<const probe::SeriesState*> CurrentSuccesses(const HealthInputs& inputs) {
  std::vector<const probe::SeriesState*> current;
  for (const auto& state : Series(inputs)) {
    if (!state.last.success) continue;
    if (inputs.is_current && !inputs.is_current(state)) continue;
    current.push_back(&state);
  }
  return current;
}

void CheckStriping(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  const double max_share = inputs.thresholds.multirail_max_rail_share;
  std::map<std::string, std::vector<std::string>> failures;  // by peer
  for (const auto* state : CurrentSuccesses(inputs)) {
    const auto busiest = probe::BusiestProbedRail(state->last);
    if (!busiest) continue;
    auto& reasons = failures[state->key.peer];
    if (busiest->share > max_share) {
      reasons.push_back(fmt::format(
          "{} carried {:.0f}% of the bytes of ucx_multirail_throughput over {} (size {}), more "
          "than {:.0f}% (health.multirail_max_rail_share): UCX is not striping",
          busiest->rail, busiest->share * 100, state->key.rail, state->key.message_size_bytes,
          max_share * 100));
    }
  }
  for (const auto& [peer, reasons] : failures) {
    out.push_back(Verdict("multirail_striping", "", peer, Join(reasons, "; ")));
  }
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// Why a rail's run fell short: below the line rate (UCX only: one TCP stream is bound by a CPU
// long before the wire) or below its siblings, the other rails of its group.
std::vector<std::string> Shortfalls(const HealthInputs& inputs, const std::string& kind,
                                    std::uint64_t size, const probe::SeriesState& state,
                                    const std::vector<const probe::SeriesState*>& siblings) {
  const auto& health = inputs.thresholds;
  const double throughput = state.last.throughput_bytes_per_second;
  std::vector<std::string> reasons;
  if (kind == "ucx_throughput") {
    if (const auto line = LineRate(inputs, state.key.rail);
        line && throughput < health.probe_throughput_min_line_rate_fraction * *line) {
      reasons.push_back(
          fmt::format("{} (size {}) reached {}, below {:g}% of the line rate {} "
                      "(health.probe_throughput_min_line_rate_fraction)",
                      kind, size, Gbits(throughput),
                      health.probe_throughput_min_line_rate_fraction * 100, Gbits(*line)));
    }
  }
  std::vector<double> rates;
  std::vector<std::string> names;
  for (const auto* other : siblings) {
    if (other == &state) continue;
    rates.push_back(other->last.throughput_bytes_per_second);
    names.push_back(other->key.rail + " " + Gbits(other->last.throughput_bytes_per_second));
  }
  if (rates.empty()) return reasons;
  const double median = Median(rates);
  if (throughput < health.probe_throughput_min_sibling_fraction * median) {
    reasons.push_back(fmt::format(
        "{} (size {}) reached {}, below {:g}% of its sibling rails' median {} ({}) "
        "(health.probe_throughput_min_sibling_fraction)",
        kind, size, Gbits(throughput), health.probe_throughput_min_sibling_fraction * 100,
        Gbits(median), Join(names)));
  }
  return reasons;
}

void CheckThroughput(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  // Single-rail bulk series grouped by what makes rails comparable: peer, kind and size.
  using Group = std::tuple<std::string, std::string, std::uint64_t>;
  std::map<Group, std::vector<const probe::SeriesState*>> groups;
  for (const auto* state : CurrentSuccesses(inputs)) {
    const auto kind = state->last.kind;
    if (kind != probe::ProbeKind::kUcxThroughput && kind != probe::ProbeKind::kTcpThroughput) {
      continue;
    }
    if (state->last.rails.size() != 1) continue;
    // GPU-memory runs are judged against the same rail's host run (gpu_memory_throughput), not
    // against the line rate or host-memory siblings.
    if (state->key.memory != "host") continue;
    groups[{state->key.peer, state->key.kind, state->key.message_size_bytes}].push_back(state);
  }
  std::map<RailPeer, std::vector<std::string>> verdicts;
  for (const auto& [group, states] : groups) {
    const auto& [peer, kind, size] = group;
    for (const auto* state : states) {
      auto& reasons = verdicts[{state->key.rail, peer}];
      auto shortfalls = Shortfalls(inputs, kind, size, *state, states);
      if (shortfalls.empty()) continue;
      // What the fabric did to the rail during that very run.
      shortfalls.push_back(RunDiagnosis(inputs, state->last, state->key.rail));
      reasons.insert(reasons.end(), shortfalls.begin(), shortfalls.end());
    }
  }
  for (const auto& [key, reasons] : verdicts) {
    out.push_back(Verdict("probe_throughput", key.first, key.second, Join(reasons, "; ")));
  }
}

void CheckFallback(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  std::map<RailPeer, std::vector<std::string>> verdicts;
  for (const auto* state : CurrentSuccesses(inputs)) {
    const auto& result = state->last;
    if (result.kind == probe::ProbeKind::kTcpThroughput ||
        result.kind == probe::ProbeKind::kTcpRtt) {
      continue;  // TCP by design
    }
    for (const auto& rail : result.rails) {
      auto& reasons = verdicts[{rail, result.peer}];
      if (std::find(result.fallback_rails.begin(), result.fallback_rails.end(), rail) ==
          result.fallback_rails.end()) {
        continue;
      }
      std::set<std::string> used;
      for (const auto& lane : result.lanes) {
        if (lane.rail == rail) used.insert(lane.transport + " on " + lane.device);
      }
      reasons.push_back(
          fmt::format("{} (size {}) used {} where RDMA was expected", state->key.kind,
                      state->key.message_size_bytes,
                      used.empty() ? std::string("TCP") : Join({used.begin(), used.end()})));
    }
  }
  for (const auto& [key, reasons] : verdicts) {
    out.push_back(Verdict("transport_fallback", key.first, key.second, Join(reasons, "; ")));
  }
}

}  // namespace

// The rail's line rate in bytes per second: the port's rate, else the configured expectation,
// else the netdev's speed for RDMA rails. A netdev-only TCP rail (a veth) reports a nominal
// speed that means nothing, so it has a line rate only when one is configured.
std::optional<double> LineRate(const HealthInputs& inputs, const std::string& rail_name) {
  const auto& rails = Rails(inputs);
  const auto rail = std::find_if(rails.begin(), rails.end(), [&](const inventory::Rail& candidate) {
    return candidate.name == rail_name;
  });
  if (rail == rails.end()) return std::nullopt;
  if (const auto* port = FindPort(inputs, *rail); port != nullptr && port->rate) {
    return port->rate->BytesPerSecond();
  }
  if (rail->expected_rate_gbps) return *rail->expected_rate_gbps * 1e9 / 8;
  if (rail->transport == inventory::TransportClass::kRdma) {
    if (const auto* netdev = FindNetDevice(inputs, rail->netdev);
        netdev != nullptr && netdev->speed_mbps && *netdev->speed_mbps > 0) {
      return static_cast<double>(*netdev->speed_mbps) * 1e6 / 8;
    }
  }
  return std::nullopt;
}

void CheckProbes(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckStriping(inputs, out);
  CheckThroughput(inputs, out);
  CheckFallback(inputs, out);
}

}  // namespace rail::health::detail
