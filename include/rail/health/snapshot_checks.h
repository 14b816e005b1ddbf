// The health checks over what one scrape read: the health collector, the probe collector and the
// landing page all take their verdicts from one evaluation, so they never disagree.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rail/health/checks.h"
#include "rail/inventory/snapshot.h"
#include "rail/probe/result_store.h"
#include "rail/probe/striping.h"

namespace rail::health {

// What the checks read besides the inventory.
struct Context {
  Thresholds thresholds;
  probe::FigureLimits figures;
  const probe::ResultStore* results = nullptr;  // null when no probe runs
  // The IPv4 addresses of the host's interfaces (ReadInterfaceAddresses). Empty: none known; the
  // checks then use the rails' own addresses.
  std::function<std::vector<InterfaceAddress>()> interface_addresses;
  std::string own_agent_version;
  std::string own_ucx_version;
  // The probe worker's capabilities (WorkerStatus::capabilities, or QueryWorkerCapabilities for
  // `doctor`); empty while unknown.
  std::function<std::optional<probe::WorkerCapabilities>()> capabilities;
  // The counters' readings across scrapes and the fabric sampler's samples, for the windowed
  // checks; every copy of a context shares one history.
  std::shared_ptr<CounterHistory> counter_history = std::make_shared<CounterHistory>();
  // Each rail's LLDP neighbours across scrapes (rail_cabling's change verdict); shared likewise.
  std::shared_ptr<NeighborHistory> neighbor_history = std::make_shared<NeighborHistory>();
  // The time of those samples; null: the steady clock.
  const base::Clock* clock = nullptr;
};

// What the checks saw and said, so that a caller showing them reads nothing twice.
struct SnapshotVerdicts {
  std::vector<InterfaceAddress> addresses;
  std::vector<probe::SeriesState> series;  // every probe series, current or not
  // Each peer's striping efficiency over `series`, computed once for the multirail_striping
  // check and the probe collector's gauges, so the two never disagree.
  std::vector<probe::StripingEfficiency> striping;
  std::vector<CheckResult> checks;
};

// Evaluates every check on the snapshot's devices, rails, netdevs and bonds, the context's
// interface addresses and probe results (only current results count). Does not log. The
// snapshot's fabric counters become a reading of the context's counter history
// (CounterHistory::Record), `readings_before` being its Readings() before the snapshot read
// anything (collectors::Scrape takes it when made).
SnapshotVerdicts EvaluateSnapshot(inventory::Snapshot& snapshot, const Context& context,
                                  std::uint64_t readings_before);

// The verdict of `check` about `rail` and `peer`, or nullptr.
const CheckResult* FindVerdict(const std::vector<CheckResult>& checks, const std::string& check,
                               const std::string& rail, const std::string& peer);

}  // namespace rail::health
