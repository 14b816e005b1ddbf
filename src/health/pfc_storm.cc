// pfc_storm: the NIC's pause-storm error events rose within the window: it sent pause so long that
// it gave up pausing its switch (mlx5 tx_pause_storm_error_events), so the lossless priority may
// have dropped. Warnings (tx_pause_storm_warning_events) alone do not fail; the reason names them.
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {

void CheckPfcStorms(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto& rail : Rails(inputs)) {
    bool judged = false;
    std::vector<std::string> storms;
    for (const auto* reading : RailReadings(inputs, rail.name)) {
      const auto* errors = nic::FindSample(*reading, nic::FabricCounter::kPauseStormErrors);
      const auto error_rise =
          errors ? SampleDelta(inputs, rail.name, *reading, *errors) : std::nullopt;
      if (!error_rise) continue;
      judged = true;
      if (error_rise->increase <= 0) continue;
      const auto* warnings = nic::FindSample(*reading, nic::FabricCounter::kPauseStormWarnings);
      const auto warning_rise =
          warnings ? SampleDelta(inputs, rail.name, *reading, *warnings) : std::nullopt;
      storms.push_back(fmt::format(
          "{} {} rose by {:.0f} in {}{}", reading->netdev, errors->source, error_rise->increase,
          SpanText(error_rise->span),
          warning_rise ? fmt::format(" ({} by {:.0f})", warnings->source, warning_rise->increase)
                       : std::string()));
    }
    if (!judged) continue;
    out.push_back(Verdict(
        "pfc_storm", rail.name, "",
        storms.empty() ? std::string()
                       : fmt::format("pause storm: {}; the NIC transmitted pause until it timed "
                                     "out, so this host's receive path stalled (look for a hung "
                                     "process or driver, rx_out_of_buffer, PCIe stalls) and the "
                                     "lossless priority may have dropped packets",
                                     Join(storms, "; "))));
  }
}

}  // namespace rail::health::detail
