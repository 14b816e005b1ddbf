// link_flaps: the rail's link went down within the window. The NIC's own count of physical
// link-down events is preferred (mlx5 link_down_events_phy, bnxt_en link_down_events); without it,
// the netdev's carrier_down_count (which also counts an administrator's down/up and driver
// reconfigurations), and for an IB port without netdev, the PMA's link_downed.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {
namespace {

struct Evidence {
  std::optional<CounterDelta> rise;
  std::string counter;
};

Evidence LinkDowns(const HealthInputs& inputs, const inventory::Rail& rail) {
  Evidence best;
  for (const auto* reading : RailReadings(inputs, rail.name)) {
    const auto* downs = nic::FindSample(*reading, nic::FabricCounter::kLinkDownEvents);
    if (downs == nullptr) continue;
    const auto rise = SampleDelta(inputs, rail.name, *reading, *downs);
    if (!rise) continue;
    if (!best.rise || rise->increase > best.rise->increase) {
      best = {rise, reading->netdev + " " + downs->source};
    }
  }
  if (best.rise) return best;
  if (!rail.netdev.empty()) {
    if (const auto rise = CarrierDownDelta(inputs, rail.name, rail.netdev)) {
      return {rise, rail.netdev + " carrier_down_count"};
    }
  }
  if (const auto rise = PortCounterDelta(inputs, rail.name, "link_downed")) {
    return {rise, rail.device + " port " + std::to_string(rail.port) + " link_downed"};
  }
  return best;
}

}  // namespace

void CheckLinkFlaps(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto& rail : Rails(inputs)) {
    const auto evidence = LinkDowns(inputs, rail);
    if (!evidence.rise) continue;
    out.push_back(Verdict(
        "link_flaps", rail.name, "",
        evidence.rise->increase <= 0
            ? std::string()
            : fmt::format("link went down {:.0f} time(s) in the last {} ({}): reseat or replace "
                          "the cable or transceiver (ethtool -m shows its state) and check the "
                          "switch port's log",
                          evidence.rise->increase, SpanText(evidence.rise->span),
                          evidence.counter)));
  }
}

}  // namespace rail::health::detail
