// port_discards: the NIC's port dropped received packets within the window: the adapter could not
// absorb the traffic (mlx5 rx_discards_phy, with its per-priority split rx_prio<p>_discards named
// where the driver lists it; bnxt_en's per-CoS-queue rx_discard_packets_cos<n>; ice's
// rx_dropped.nic, its receive packet buffer). A rail carries RDMA: a port that drops what it
// receives is a fault whatever the priority.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {
namespace {

// "priorities 3 (1200), 5 (4)": the per-priority or per-queue rises that carry the drops.
std::string Breakdown(const RailRises& rises, const nic::FabricReading& of,
                      nic::FabricCounter counter, const char* what) {
  std::vector<std::string> parts;
  rises.EachSampleRise(counter, [&](const auto& reading, const auto& sample, const auto& rise) {
    if (&reading != &of || rise.increase <= 0) return;
    const unsigned number = sample.priority ? *sample.priority : sample.index.value_or(0);
    parts.push_back(fmt::format("{} ({:.0f})", number, rise.increase));
  });
  return parts.empty() ? std::string() : fmt::format(", on {} {}", what, Join(parts));
}

}  // namespace

Findings PortDiscardFindings(const RailRises& rises, const Thresholds& limits) {
  Findings found;
  const auto judge = [&](const nic::FabricReading& reading, const nic::FabricSample& sample,
                         const CounterDelta& rise) {
    found.judged = true;
    if (rise.increase <= 0 || PerSecond(rise) <= limits.port_discards_max_per_second) return;
    found.faults.push_back(fmt::format(
        "{} {} rose by {:.0f} in {}{}{}", reading.netdev, sample.source, rise.increase,
        rises.Span(rise),
        Breakdown(rises, reading, nic::FabricCounter::kPriorityReceiveDiscards, "priorities"),
        sample.index
            ? std::string()
            : Breakdown(rises, reading, nic::FabricCounter::kQueueReceiveDiscards, "CoS queues")));
  };
  rises.EachRise(nic::FabricCounter::kPortReceiveDiscards, judge);
  // Per-queue discards are judged alone only where the driver gives no port total.
  rises.EachSampleRise(nic::FabricCounter::kQueueReceiveDiscards,
                       [&](const auto& reading, const auto& sample, const auto& rise) {
                         if (nic::FindSample(reading, nic::FabricCounter::kPortReceiveDiscards)) {
                           return;
                         }
                         judge(reading, sample, rise);
                       });
  return found;
}

void CheckPortDiscards(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckWindowed(
      inputs, "port_discards", PortDiscardFindings,
      [](const std::string& faults) {
        return "the NIC's port dropped received packets: " + faults +
               "; its buffers overflowed: protect the RoCE priority with PFC end to end (dcb pfc "
               "show), check the port's buffer split (dcb buffer show) and find the burst's source";
      },
      out);
}

}  // namespace rail::health::detail
