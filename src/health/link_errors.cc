// link_errors: errors FEC could not correct rose within the window (rx_pcs_symbol_err_phy: traffic
// was lost), or FEC corrected more than link_max_corrected_bit_ratio of the bits received
// (rx_corrected_bits_phy / rx_bits_phy: a marginal cable still working).
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {
Findings LinkErrorFindings(const RailRises& rises, double max_corrected_ratio) {
  Findings found;
  for (const auto* reading : rises.Readings()) {
    const nic::FabricSample* uncorrected = nullptr;
    const nic::FabricSample* corrected = nullptr;
    const nic::FabricSample* bits = nullptr;
    const auto lost = rises.Rise(*reading, nic::FabricCounter::kPostFecSymbolErrors, &uncorrected);
    const auto fixed = rises.Rise(*reading, nic::FabricCounter::kFecCorrectedBits, &corrected);
    const auto received = rises.Rise(*reading, nic::FabricCounter::kReceivedBits, &bits);
    if (lost) {
      found.judged = true;
      if (lost->increase > 0) {
        found.faults.push_back(
            fmt::format("{} {} rose by {:.0f} in {} (errors FEC did not correct)", reading->netdev,
                        uncorrected->source, lost->increase, rises.Span(*lost)));
      }
    }
    if (fixed && received && received->increase > 0) {
      found.judged = true;
      const double ratio = fixed->increase / received->increase;
      if (ratio > max_corrected_ratio) {
        found.faults.push_back(fmt::format("{} corrected-bit ratio {:.2g} above {:.2g} ({} / {})",
                                           reading->netdev, ratio, max_corrected_ratio,
                                           corrected->source, bits->source));
      }
    }
  }
  return found;
}

void CheckLinkErrors(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  const double limit = inputs.thresholds.link_max_corrected_bit_ratio;
  for (const auto& rail : Rails(inputs)) {
    const auto errors = LinkErrorFindings(WindowRises(inputs, rail), limit);
    if (!errors.judged) continue;
    out.push_back(Verdict("link_errors", rail.name, "",
                          errors.faults.empty()
                              ? std::string()
                              : fmt::format("{}: clean or replace the cable or transceiver "
                                            "(ethtool -m for its levels, ethtool -S for the "
                                            "lanes' errors)",
                                            Join(errors.faults, "; "))));
  }
}

}  // namespace rail::health::detail
