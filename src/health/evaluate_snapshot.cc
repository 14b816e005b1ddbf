#include <algorithm>

#include "health/fabric_evidence.h"
#include "rail/health/snapshot_checks.h"

namespace rail::health {

SnapshotVerdicts EvaluateSnapshot(inventory::Snapshot& snapshot, const Context& context,
                                  std::uint64_t readings_before) {
  SnapshotVerdicts verdicts;
  if (context.interface_addresses) verdicts.addresses = context.interface_addresses();
  if (context.results) verdicts.series = context.results->Snapshot();

  HealthInputs inputs;
  inputs.rails = &snapshot.Rails();
  inputs.devices = &snapshot.Devices();
  inputs.net_devices = &snapshot.NetDevices();
  inputs.bonds = &snapshot.Bonds();
  inputs.addresses = &verdicts.addresses;
  inputs.probe_series = &verdicts.series;
  inputs.thresholds = context.thresholds;
  inputs.figures = context.figures;
  inputs.own_agent_version = context.own_agent_version;
  inputs.own_ucx_version = context.own_ucx_version;
  if (const auto* store = context.results) {
    inputs.is_current = [store](const probe::SeriesState& state) {
      return store->IsCurrent(state);
    };
  }
  verdicts.striping =
      probe::StripingEfficiencies(verdicts.series, inputs.is_current, context.figures);
  inputs.striping = &verdicts.striping;
  inputs.topology = &snapshot.Topology();
  inputs.peer_memory = &snapshot.PeerMemory();
  if (snapshot.sources().qos) inputs.qos = &snapshot.Qos();
  std::optional<probe::WorkerCapabilities> capabilities;
  if (context.capabilities) capabilities = context.capabilities();
  if (capabilities) inputs.capabilities = &*capabilities;
  inputs.fabric = &snapshot.Fabric();
  inputs.nic_temperatures = &snapshot.NicTemperatures();
  const base::Clock& clock = context.clock ? *context.clock : base::SystemClock();
  inputs.now = clock.Now();
  if (context.counter_history) {
    detail::ObserveFabric(inputs, readings_before, inputs.now,
                          detail::ScrapeReadingSpacing(context.thresholds),
                          *context.counter_history);
    inputs.history = context.counter_history.get();
  }
  if (snapshot.sources().neighbors) {
    inputs.neighbors = &snapshot.Neighbors();
    if (context.neighbor_history) {
      context.neighbor_history->Observe(*inputs.neighbors, inputs.now);
      inputs.neighbor_history = context.neighbor_history.get();
    }
  }
  verdicts.checks = EvaluateChecks(inputs);
  return verdicts;
}

const CheckResult* FindVerdict(const std::vector<CheckResult>& checks, const std::string& check,
                               const std::string& rail, const std::string& peer) {
  const auto found = std::find_if(checks.begin(), checks.end(), [&](const CheckResult& result) {
    return result.check == check && result.rail == rail && result.peer == peer;
  });
  return found == checks.end() ? nullptr : &*found;
}

}  // namespace rail::health
