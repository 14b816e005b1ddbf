// link_flaps: the rail's link went down within the window. The NIC's own count of physical
// link-down events is preferred (mlx5 link_down_events_phy, bnxt_en link_down_events); without it,
// the netdev's carrier_down_count (which also counts an administrator's down/up and driver
// reconfigurations), and for an IB port without netdev, the PMA's link_downed. A transceiver
// unplugged (mlx5 module_unplug) is a link event too, named apart.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {
namespace {

struct Evidence {
  std::optional<CounterDelta> rise;
  std::string counter;
};

Evidence LinkDowns(const RailRises& rises) {
  Evidence best;
  rises.EachRise(nic::FabricCounter::kLinkDownEvents,
                 [&](const nic::FabricReading& reading, const nic::FabricSample& downs,
                     const CounterDelta& rise) {
                   if (!best.rise || rise.increase > best.rise->increase) {
                     best = {rise, reading.netdev + " " + downs.source};
                   }
                 });
  if (best.rise) return best;
  if (const auto rise = rises.CarrierDown()) {
    return {rise, rises.netdev() + " carrier_down_count"};
  }
  if (const auto rise = rises.PortCounter("link_downed")) {
    return {rise, rises.port() + " link_downed"};
  }
  return best;
}

}  // namespace

Findings LinkDownFindings(const RailRises& rises, const Thresholds&) {
  const auto evidence = LinkDowns(rises);
  Findings found;
  found.judged = evidence.rise.has_value();
  if (found.judged && evidence.rise->increase > 0) {
    found.faults.push_back(fmt::format("link went down {:.0f} time(s) in {} ({})",
                                       evidence.rise->increase, rises.Span(*evidence.rise),
                                       evidence.counter));
  }
  rises.EachRise(nic::FabricCounter::kModuleUnplugs, [&](const nic::FabricReading& reading,
                                                         const nic::FabricSample& unplugs,
                                                         const CounterDelta& rise) {
    found.judged = true;
    if (rise.increase <= 0) return;
    found.faults.push_back(fmt::format("transceiver unplugged {:.0f} time(s) in {} ({} {})",
                                       rise.increase, rises.Span(rise), reading.netdev,
                                       unplugs.source));
  });
  return found;
}

void CheckLinkFlaps(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckWindowed(
      inputs, "link_flaps", LinkDownFindings,
      [](const std::string& faults) {
        return faults +
               ": reseat or replace the cable or transceiver (ethtool -m shows its state) and "
               "check "
               "the switch port's log";
      },
      out);
}

}  // namespace rail::health::detail
