// roce_drops: the NIC discarded packets of a lossless priority within the window (mlx5
// rx_prio<p>_buf_discard, rx_prio<p>_cong_discard, on a priority the driver lists PFC counters
// for). On a lossless priority each one is a RoCE packet lost and retransmitted; what the RDMA
// transport saw of it is roce_retransmissions'.
#include <spdlog/fmt/fmt.h>

#include <set>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {
namespace {

// The priorities the driver lists pause counters for: the lossless ones.
std::set<unsigned> PfcPriorities(const nic::FabricReading& reading) {
  std::set<unsigned> priorities;
  for (const auto& sample : reading.samples) {
    if (sample.counter == nic::FabricCounter::kPfcPauseFrames && sample.priority) {
      priorities.insert(*sample.priority);
    }
  }
  return priorities;
}

}  // namespace

Findings DropFindings(const RailRises& rises, const Thresholds&) {
  Findings found;
  for (const auto* reading : rises.Readings()) {
    const auto lossless = PfcPriorities(*reading);
    for (const auto& sample : reading->samples) {
      const bool discard = sample.counter == nic::FabricCounter::kBufferDiscards ||
                           sample.counter == nic::FabricCounter::kCongestionDiscards;
      if (!discard || !sample.priority || !lossless.contains(*sample.priority)) continue;
      const auto rise = rises.Sample(*reading, sample);
      if (!rise) continue;
      found.judged = true;
      if (rise->increase > 0) {
        found.faults.push_back(fmt::format("{} {} rose by {:.0f} in {} on lossless priority {}",
                                           reading->netdev, sample.source, rise->increase,
                                           rises.Span(*rise), *sample.priority));
      }
    }
  }
  return found;
}

void CheckRoceDrops(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckWindowed(
      inputs, "roce_drops", DropFindings,
      [](const std::string& faults) {
        return "RoCE packets dropped by the NIC: " + faults +
               "; on a lossless priority that means PFC is off or mismatched somewhere on the path "
               "(dcb pfc show on both hosts and the switch) or a buffer overflowed";
      },
      out);
}

}  // namespace rail::health::detail
