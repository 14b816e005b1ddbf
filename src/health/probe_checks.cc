// Checks derived from the latest probe results: multirail_striping, probe_throughput and
// transport_fallback. Only current, successful results count: a failed run measured nothing, and
// a stale one no longer describes the rail.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "health/check_helpers.h"
#include "rail/probe/striping.h"

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

// What a check found about one rail and peer: failures, or why it could not judge.
struct PeerFindings {
  std::vector<std::string> failures;
  std::vector<std::string> held_back;
  bool judged = false;
};

void Emit(const char* check, const std::string& rail, const std::string& peer,
          const PeerFindings& findings, std::vector<CheckResult>& out) {
  if (!findings.failures.empty()) {
    out.push_back(Verdict(check, rail, peer, Join(findings.failures, "; ")));
  } else if (!findings.held_back.empty()) {
    out.push_back(HeldBack(check, rail, peer, Join(findings.held_back, "; ")));
  } else if (findings.judged) {
    out.push_back(Verdict(check, rail, peer, ""));
  }
}

// Whether the run's spread says it was noise: its interval rates varied more than the limit and
// its fabric evidence shows no fault on any of its rails during it. A rail that dropped,
// retransmitted or paused swings too, and then the swings are the rail's doing: it is judged.
bool WasNoise(const HealthInputs& inputs, const probe::ProbeResult& run) {
  if (!probe::IsNoisy(run, inputs.figures)) return false;
  return std::none_of(run.rails.begin(), run.rails.end(), [&](const std::string& rail) {
    return !FindRunFaults(inputs, run, rail).faults.empty();
  });
}

const probe::ProbeResult* FindRun(const HealthInputs& inputs, const probe::SeriesKey& key) {
  for (const auto& state : Series(inputs)) {
    if (state.key == key) return &state.last;
  }
  return nullptr;
}

std::string SpreadText(const probe::ProbeResult& run) {
  return run.spread ? fmt::format("cv {:.2f}", run.spread->cv) : std::string("no spread");
}

// The share of the bytes the busiest rail carried, by the rails' own counters.
void JudgeShares(const HealthInputs& inputs, std::map<std::string, PeerFindings>& by_peer) {
  const double max_share = inputs.thresholds.multirail_max_rail_share;
  for (const auto* state : CurrentSuccesses(inputs)) {
    const auto busiest = probe::BusiestProbedRail(state->last);
    if (!busiest) continue;
    auto& findings = by_peer[state->key.peer];
    if (!state->last.withheld.empty()) {
      findings.held_back.push_back(
          fmt::format("the figures of ucx_multirail_throughput (size {}) were withheld: {}",
                      state->key.message_size_bytes, state->last.withheld.front().message));
      continue;
    }
    findings.judged = true;
    if (busiest->share > max_share) {
      findings.failures.push_back(fmt::format(
          "{} carried {:.0f}% of the bytes of ucx_multirail_throughput over {} (size {}), more "
          "than {:.0f}% (health.multirail_max_rail_share): UCX is not striping",
          busiest->rail, busiest->share * 100, state->key.rail, state->key.message_size_bytes,
          max_share * 100));
    }
  }
}

// UCX's striping against every rail driven at once (probe/striping.h).
void JudgeEfficiencies(const HealthInputs& inputs, std::map<std::string, PeerFindings>& by_peer) {
  const double minimum = inputs.thresholds.multirail_min_efficiency;
  std::vector<probe::StripingEfficiency> computed;
  if (inputs.striping == nullptr) {
    computed = probe::StripingEfficiencies(Series(inputs), inputs.is_current, inputs.figures);
  }
  for (const auto& efficiency : inputs.striping != nullptr ? *inputs.striping : computed) {
    auto& findings = by_peer[efficiency.peer];
    if (!efficiency.value) {
      findings.held_back.push_back("striping efficiency withheld (" + efficiency.withheld_reason +
                                   "): " + efficiency.message);
      continue;
    }
    if (*efficiency.value >= minimum) {
      findings.judged = true;
      continue;
    }
    const std::string shortfall = fmt::format(
        "UCX's striping reached {:.2f} of the rails driven at once, below {:g} "
        "(health.multirail_min_efficiency)",
        *efficiency.value, minimum);
    const auto* striped = FindRun(inputs, efficiency.striped);
    const auto* capacity = FindRun(inputs, efficiency.capacity);
    if ((striped != nullptr && WasNoise(inputs, *striped)) ||
        (capacity != nullptr && WasNoise(inputs, *capacity))) {
      findings.held_back.push_back(
          shortfall + fmt::format(", but a run's interval rates varied by more than cv {:g} "
                                  "(figures.max_interval_cv) with no fabric fault during it: "
                                  "noise, not judged",
                                  inputs.figures.max_interval_cv));
    } else {
      findings.judged = true;
      findings.failures.push_back(shortfall);
    }
  }
}

void CheckStriping(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  std::map<std::string, PeerFindings> by_peer;
  JudgeShares(inputs, by_peer);
  JudgeEfficiencies(inputs, by_peer);
  for (const auto& [peer, findings] : by_peer) {
    Emit("multirail_striping", "", peer, findings, out);
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
  std::map<RailPeer, PeerFindings> findings;
  for (const auto* state : CurrentSuccesses(inputs)) {
    const auto kind = state->last.kind;
    if (kind != probe::ProbeKind::kUcxThroughput && kind != probe::ProbeKind::kTcpThroughput) {
      continue;
    }
    if (state->last.rails.size() != 1) continue;
    // GPU-memory runs are judged against the same rail's host run (gpu_memory_throughput), not
    // against the line rate or host-memory siblings.
    if (state->key.memory != "host") continue;
    if (!state->last.withheld.empty()) {
      // Not a measurement: neither this rail's verdict nor its siblings' yardstick.
      findings[{state->key.rail, state->key.peer}].held_back.push_back(
          fmt::format("the figures of {} (size {}) were withheld: {}", state->key.kind,
                      state->key.message_size_bytes, state->last.withheld.front().message));
      continue;
    }
    groups[{state->key.peer, state->key.kind, state->key.message_size_bytes}].push_back(state);
  }
  for (const auto& [group, states] : groups) {
    const auto& [peer, kind, size] = group;
    for (const auto* state : states) {
      auto& rail = findings[{state->key.rail, peer}];
      auto shortfalls = Shortfalls(inputs, kind, size, *state, states);
      if (shortfalls.empty()) {
        rail.judged = true;
        continue;
      }
      if (WasNoise(inputs, state->last)) {
        rail.held_back.push_back(
            Join(shortfalls, "; ") +
            fmt::format(", but the run's interval rates varied ({}, above figures.max_interval_cv "
                        "{:g}) with no fabric fault during it: noise, not judged; {}",
                        SpreadText(state->last), inputs.figures.max_interval_cv,
                        RunDiagnosis(inputs, state->last, state->key.rail)));
        continue;
      }
      rail.judged = true;
      // What the fabric did to the rail during that very run.
      shortfalls.push_back(RunDiagnosis(inputs, state->last, state->key.rail));
      rail.failures.insert(rail.failures.end(), shortfalls.begin(), shortfalls.end());
    }
  }
  for (const auto& [key, rail] : findings)
    Emit("probe_throughput", key.first, key.second, rail, out);
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

// The rail's line rate in bytes per second (inventory::LineRate).
std::optional<double> LineRate(const HealthInputs& inputs, const std::string& rail_name) {
  const auto& rails = Rails(inputs);
  const auto rail = std::find_if(rails.begin(), rails.end(), [&](const inventory::Rail& candidate) {
    return candidate.name == rail_name;
  });
  if (rail == rails.end()) return std::nullopt;
  return inventory::LineRate(*rail, FindPort(inputs, *rail), FindNetDevice(inputs, rail->netdev));
}

void CheckProbes(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckStriping(inputs, out);
  CheckThroughput(inputs, out);
  CheckFallback(inputs, out);
}

}  // namespace rail::health::detail
