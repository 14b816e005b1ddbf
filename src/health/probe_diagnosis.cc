// The diagnosis of a failing probe_throughput: what the fabric checks' rules (fabric_evidence.h)
// find in the fabric evidence of the failing run itself (probe::RailFabricEvidence, the rail's
// counters read at the run's start and end), so that a slow rail's reason says whether the fabric
// paused, dropped or lost its link while it was measured, or that it did not, or that nothing
// could be read (no evidence is not a clean bill).
#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {
namespace {

// rx_discards_phy (mlx5): packets the port dropped for want of receive buffers, on any priority.
// Only the diagnosis reads it: over a window it also counts lossy traffic nobody probed.
Findings PortDiscardFindings(const RailRises& rises) {
  Findings found;
  const auto discarded = [&](const nic::FabricReading& reading, const nic::FabricSample& discards,
                             const CounterDelta& rise) {
    found.judged = true;
    if (rise.increase <= 0) return;
    found.faults.push_back(fmt::format("{} discarded {:.0f} packets in {} ({})", reading.netdev,
                                       rise.increase, rises.Span(rise), discards.source));
  };
  rises.EachRise(nic::FabricCounter::kPortReceiveDiscards, discarded);
  return found;
}

const inventory::Rail* FindRail(const HealthInputs& inputs, const std::string& name) {
  const auto& rails = Rails(inputs);
  const auto rail = std::find_if(rails.begin(), rails.end(),
                                 [&](const inventory::Rail& one) { return one.name == name; });
  return rail == rails.end() ? nullptr : &*rail;
}

}  // namespace

std::string RunDiagnosis(const HealthInputs& inputs, const probe::ProbeResult& run,
                         const std::string& rail) {
  const auto evidence =
      std::find_if(run.fabric.begin(), run.fabric.end(),
                   [&](const probe::RailFabricEvidence& one) { return one.rail == rail; });
  if (evidence == run.fabric.end() || !evidence->Read()) {
    return "the run's fabric counters could not be read, so congestion and link faults are not "
           "ruled out";
  }
  const inventory::Rail* known = FindRail(inputs, rail);
  const RailRises rises = RunRises(*evidence, known ? known->netdev : "",
                                   known && !known->device.empty()
                                       ? known->device + " port " + std::to_string(known->port)
                                       : "");
  const auto& limits = inputs.thresholds;
  const std::pair<const char*, Findings> rules[] = {
      {"pause", PauseFindings(rises, limits.pfc_pause_max_fraction)},
      {"pause storms", StormFindings(rises)},
      {"discards", PortDiscardFindings(rises)},
      {"RoCE drops", DropFindings(rises)},
      {"congestion control", CongestionControlFindings(rises)},
      {"link-down", LinkDownFindings(rises)},
      {"FEC", LinkErrorFindings(rises, limits.link_max_corrected_bit_ratio)},
  };
  std::vector<std::string> faults;
  std::vector<std::string> judged;
  for (const auto& [name, findings] : rules) {
    if (findings.judged) judged.emplace_back(name);
    faults.insert(faults.end(), findings.faults.begin(), findings.faults.end());
  }
  if (!faults.empty()) return "during the run: " + Join(faults, "; ");
  if (judged.empty()) {
    return "no counter read during the run can show congestion or link faults, so they are not "
           "ruled out";
  }
  return fmt::format("no congestion or link evidence during the run ({} counters within limits)",
                     Join(judged));
}

}  // namespace rail::health::detail
