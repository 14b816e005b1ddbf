// link_errors: errors FEC could not correct rose within the window (rx_pcs_symbol_err_phy: traffic
// was lost), or FEC corrected more than link_max_corrected_bit_ratio of the bits received
// (rx_corrected_bits_phy / rx_bits_phy: a marginal cable still working).
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {
namespace {

std::optional<CounterDelta> RiseOf(const HealthInputs& inputs, const std::string& rail,
                                   const nic::FabricReading& reading, nic::FabricCounter counter,
                                   const nic::FabricSample** sample) {
  *sample = nic::FindSample(reading, counter);
  return *sample ? SampleDelta(inputs, rail, reading, **sample) : std::nullopt;
}

}  // namespace

void CheckLinkErrors(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  const double limit = inputs.thresholds.link_max_corrected_bit_ratio;
  for (const auto& rail : Rails(inputs)) {
    bool judged = false;
    std::vector<std::string> errors;
    for (const auto* reading : RailReadings(inputs, rail.name)) {
      const nic::FabricSample* uncorrected = nullptr;
      const nic::FabricSample* corrected = nullptr;
      const nic::FabricSample* bits = nullptr;
      const auto lost = RiseOf(inputs, rail.name, *reading,
                               nic::FabricCounter::kPostFecSymbolErrors, &uncorrected);
      const auto fixed =
          RiseOf(inputs, rail.name, *reading, nic::FabricCounter::kFecCorrectedBits, &corrected);
      const auto received =
          RiseOf(inputs, rail.name, *reading, nic::FabricCounter::kReceivedBits, &bits);
      if (lost) {
        judged = true;
        if (lost->increase > 0) {
          errors.push_back(fmt::format("{} {} rose by {:.0f} in {} (errors FEC did not correct)",
                                       reading->netdev, uncorrected->source, lost->increase,
                                       SpanText(lost->span)));
        }
      }
      if (fixed && received && received->increase > 0) {
        judged = true;
        const double ratio = fixed->increase / received->increase;
        if (ratio > limit) {
          errors.push_back(fmt::format("{} corrected-bit ratio {:.2g} above {:.2g} ({} / {})",
                                       reading->netdev, ratio, limit, corrected->source,
                                       bits->source));
        }
      }
    }
    if (!judged) continue;
    out.push_back(Verdict("link_errors", rail.name, "",
                          errors.empty() ? std::string()
                                         : fmt::format("{}: clean or replace the cable or "
                                                       "transceiver (ethtool -m for its levels, "
                                                       "ethtool -S for the lanes' errors)",
                                                       Join(errors, "; "))));
  }
}

}  // namespace rail::health::detail
