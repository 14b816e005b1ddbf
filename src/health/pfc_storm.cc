// pfc_storm: the NIC's pause-storm error events rose within the window: it sent pause so long that
// it gave up pausing its switch (mlx5 tx_pause_storm_error_events; bnxt_en's firmware counts the
// same as continuous_roce_pause_events), so the lossless priority may have dropped. Warnings
// (tx_pause_storm_warning_events) alone do not fail; the reason names them.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {

Findings StormFindings(const RailRises& rises, const Thresholds&) {
  Findings found;
  rises.EachRise(nic::FabricCounter::kPauseStormErrors, [&](const nic::FabricReading& reading,
                                                            const nic::FabricSample& errors,
                                                            const CounterDelta& error_rise) {
    found.judged = true;
    if (error_rise.increase <= 0) return;
    const nic::FabricSample* warnings = nullptr;
    const auto warning_rise =
        rises.Rise(reading, nic::FabricCounter::kPauseStormWarnings, &warnings);
    found.faults.push_back(fmt::format(
        "{} {} rose by {:.0f} in {}{}", reading.netdev, errors.source, error_rise.increase,
        rises.Span(error_rise),
        warning_rise ? fmt::format(" ({} by {:.0f})", warnings->source, warning_rise->increase)
                     : std::string()));
  });
  return found;
}

void CheckPfcStorms(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckWindowed(
      inputs, "pfc_storm", StormFindings,
      [](const std::string& faults) {
        return "pause storm: " + faults +
               "; the NIC transmitted pause until it timed out, so this host's receive path "
               "stalled "
               "(look for a hung process or driver, rx_out_of_buffer, PCIe stalls) and the "
               "lossless "
               "priority may have dropped packets";
      },
      out);
}

}  // namespace rail::health::detail
