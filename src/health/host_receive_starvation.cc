// host_receive_starvation: this host did not give its NIC receive buffers in time, within the
// window: a host fault, not the fabric's. Ethernet: the driver did not refill the netdev's receive
// queues (mlx5 rx_out_of_buffer; bnxt_en's ring discards, rx_total_discard_pkts until 6.4 and
// rx_total_ring_discards since), so the kernel's networking, the TCP path, cannot keep up. RDMA:
// an application posted no receive (the port's hw_counters/out_of_buffer).
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"
#include "rail/nic/rdma_counters.h"

namespace rail::health::detail {

Findings HostStarvationFindings(const RailRises& rises, const Thresholds& limits) {
  Findings found;
  const double limit = limits.host_receive_drops_max_per_second;
  const auto judge = [&](const nic::FabricReading& reading, const nic::FabricSample& sample,
                         const CounterDelta& rise) {
    if (sample.counter == nic::FabricCounter::kRingDiscards &&
        sample.direction != nic::Direction::kRx) {
      return;
    }
    found.judged = true;
    if (rise.increase <= 0 || PerSecond(rise) <= limit) return;
    found.faults.push_back(fmt::format(
        "{} {} rose by {:.0f} in {} (Ethernet receive queues not refilled in time: the host's "
        "kernel networking cannot keep up)",
        reading.netdev, sample.source, rise.increase, rises.Span(rise)));
  };
  rises.EachRise(nic::FabricCounter::kReceiveQueueOutOfBuffer, judge);
  rises.EachSampleRise(nic::FabricCounter::kRingDiscards, judge);
  if (const auto rise = rises.HwCounter(std::string(nic::kRdmaReceiveNotPosted))) {
    found.judged = true;
    if (rise->increase > 0 && PerSecond(*rise) > limit) {
      found.faults.push_back(
          fmt::format("{} {} rose by {:.0f} in {} (an RDMA application posted no receive in time)",
                      rises.port().empty() ? "the RDMA port" : rises.port(),
                      nic::kRdmaReceiveNotPosted, rise->increase, rises.Span(*rise)));
    }
  }
  return found;
}

void CheckHostReceiveStarvation(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckWindowed(
      inputs, "host_receive_starvation", HostStarvationFindings,
      [](const std::string& faults) {
        return "a host fault, not the fabric's: " + faults +
               "; for Ethernet look at CPU load, IRQ affinity and the ring size "
               "(ethtool -g), for RDMA at the consuming application";
      },
      out);
}

}  // namespace rail::health::detail
