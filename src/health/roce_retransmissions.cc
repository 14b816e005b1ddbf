// roce_retransmissions: the RDMA transport of the rail's port retransmitted within the window, as
// its hw_counters say under each driver's names (nic::TransportCounters(): mlx5_ib, bnxt_re,
// rdma_rxe). Loss (sequence errors, NAKs, duplicates), timeouts (the ACK timer expired) and RNR
// (the peer posted no receive) are told apart in the reason: the first two point at the fabric,
// RNR at the peer's application.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"
#include "rail/nic/rdma_counters.h"

namespace rail::health::detail {

Findings RetransmissionFindings(const RailRises& rises, const Thresholds& limits) {
  Findings found;
  for (const auto& counter : nic::TransportCounters()) {
    const auto rise = rises.HwCounter(std::string(counter.file));
    if (!rise) continue;
    found.judged = true;
    if (rise->increase <= 0 || PerSecond(*rise) <= limits.roce_retransmissions_max_per_second) {
      continue;
    }
    found.faults.push_back(fmt::format("{} {} rose by {:.0f} in {} ({}: {})",
                                       rises.port().empty() ? "the RDMA port" : rises.port(),
                                       counter.file, rise->increase, rises.Span(*rise),
                                       nic::TransportEventName(counter.event), counter.meaning));
  }
  return found;
}

void CheckRoceRetransmissions(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckWindowed(
      inputs, "roce_retransmissions", RetransmissionFindings,
      [](const std::string& faults) {
        return "the RDMA transport retransmitted: " + faults +
               "; loss and timeouts on a lossless fabric mean a hop without PFC, a "
               "discarding port or a bad link (ethtool -S for discards and pause, dcb "
               "pfc show); RNR means the peer's application posts receives too slowly "
               "(rdma statistic show)";
      },
      out);
}

}  // namespace rail::health::detail
