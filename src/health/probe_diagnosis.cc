// The diagnosis of a failing probe_throughput: what the fabric checks' rules (fabric_evidence.h)
// find in the fabric evidence of the failing run itself (probe::RailFabricEvidence, the rail's
// counters read at the run's start and end), so that a slow rail's reason says whether the fabric
// paused, dropped, retransmitted or lost its link while it was measured, or that it did not, or
// that nothing could be read (no evidence is not a clean bill). Every windowed rule judges the
// run, port discards included: a rail carries RDMA, so what its port drops during a probe counts.
#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {
namespace {

const inventory::Rail* FindRail(const HealthInputs& inputs, const std::string& name) {
  const auto& rails = Rails(inputs);
  const auto rail = std::find_if(rails.begin(), rails.end(),
                                 [&](const inventory::Rail& one) { return one.name == name; });
  return rail == rails.end() ? nullptr : &*rail;
}

}  // namespace

RunFindings FindRunFaults(const HealthInputs& inputs, const probe::ProbeResult& run,
                          const std::string& rail) {
  RunFindings out;
  const auto evidence =
      std::find_if(run.fabric.begin(), run.fabric.end(),
                   [&](const probe::RailFabricEvidence& one) { return one.rail == rail; });
  if (evidence == run.fabric.end() || !evidence->Read()) return out;
  out.read = true;
  const inventory::Rail* known = FindRail(inputs, rail);
  const RailRises rises =
      RunRises(*evidence, known ? RailNames(inputs, *known) : RailRises::Rail{});
  const std::pair<const char*, Rule> rules[] = {
      {"pause", PauseFindings},
      {"802.3x pause", GlobalPauseFindings},
      {"pause storms", StormFindings},
      {"port discards", PortDiscardFindings},
      {"host receive buffers", HostStarvationFindings},
      {"RoCE drops", DropFindings},
      {"RDMA retransmissions", RetransmissionFindings},
      {"congestion control", CongestionControlFindings},
      {"link-down", LinkDownFindings},
      {"link errors", LinkErrorFindings},
  };
  for (const auto& [name, rule] : rules) {
    const auto findings = rule(rises, inputs.thresholds);
    if (findings.judged) out.judged.emplace_back(name);
    out.faults.insert(out.faults.end(), findings.faults.begin(), findings.faults.end());
  }
  return out;
}

std::string RunDiagnosis(const HealthInputs& inputs, const probe::ProbeResult& run,
                         const std::string& rail) {
  const RunFindings findings = FindRunFaults(inputs, run, rail);
  if (!findings.read) {
    return "the run's fabric counters could not be read, so congestion and link faults are not "
           "ruled out";
  }
  if (!findings.faults.empty()) return "during the run: " + Join(findings.faults, "; ");
  if (findings.judged.empty()) {
    return "no counter read during the run can show congestion or link faults, so they are not "
           "ruled out";
  }
  return fmt::format("no congestion or link evidence during the run ({} counters within limits)",
                     Join(findings.judged));
}

}  // namespace rail::health::detail
