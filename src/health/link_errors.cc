// link_errors: the link corrupted what it carried within the window. Frames lost: CRC errors (mlx5
// rx_crc_errors_phy, bnxt_en rx_fcs_err_frames, ice rx_crc_errors.nic), symbol errors (mlx5
// rx_symbol_err_phy), errors FEC could not correct (mlx5 rx_pcs_symbol_err_phy, bnxt_en
// rx_pcs_symbol_err and rx_fec_uncorrectable_blocks). A marginal link still working: FEC corrected
// more than link_max_corrected_bit_ratio of the bits on the wire. The bits are the driver's own
// count where it has one (bnxt_en rx_bits), else the port's speed times the span: a high-speed
// Ethernet PHY receives (and FEC decodes) idle symbols too, so the wire carries line rate whatever
// the traffic. No released mlx5 driver counts received bits (rx_bits_phy is documented only).
// mlx5's per-lane rx_err_lane_<n>_phy count corrected bits per lane; their sum stands for the
// total where the total is missing, and the worst lane is named.
#include <spdlog/fmt/fmt.h>

#include <chrono>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {
namespace {

constexpr nic::FabricCounter kLost[] = {
    nic::FabricCounter::kCrcErrors,
    nic::FabricCounter::kSymbolErrors,
    nic::FabricCounter::kPostFecSymbolErrors,
    nic::FabricCounter::kFecUncorrectableBlocks,
};

// Corrected bits of one reading: the total, else the lanes' sum; with the worst lane for reasons.
struct Corrected {
  std::optional<CounterDelta> rise;
  std::string source;
  std::string worst_lane;
};

Corrected CorrectedBits(const RailRises& rises, const nic::FabricReading& reading) {
  Corrected corrected;
  const nic::FabricSample* total = nullptr;
  corrected.rise = rises.Rise(reading, nic::FabricCounter::kFecCorrectedBits, &total);
  if (corrected.rise) corrected.source = total->source;
  double worst = 0;
  std::optional<CounterDelta> lanes;
  rises.EachSampleRise(
      nic::FabricCounter::kLaneCorrectedBits,
      [&](const auto& of, const auto& sample, const CounterDelta& rise) {
        if (&of != &reading) return;
        lanes = CounterDelta{(lanes ? lanes->increase : 0) + rise.increase, rise.span};
        if (rise.increase > worst) {
          worst = rise.increase;
          corrected.worst_lane =
              fmt::format("worst lane {} ({})", sample.index.value_or(0), sample.source);
        }
      });
  if (!corrected.rise && lanes) {
    corrected.rise = lanes;
    corrected.source = "the lanes' rx_err_lane_<n>_phy";
  }
  return corrected;
}

// The bits on the wire over the corrected bits' span, and what they were taken from.
std::optional<std::pair<double, std::string>> BitsOnTheWire(const RailRises& rises,
                                                            const nic::FabricReading& reading,
                                                            const CounterDelta& span) {
  const nic::FabricSample* bits = nullptr;
  if (const auto received = rises.Rise(reading, nic::FabricCounter::kReceivedBits, &bits);
      received && received->increase > 0) {
    return std::pair(received->increase, bits->source);
  }
  const auto speed = rises.LineBitsPerSecond();
  const double seconds = std::chrono::duration<double>(span.span).count();
  if (!speed || seconds <= 0) return std::nullopt;
  return std::pair(*speed * seconds,
                   fmt::format("the port's {:.0f} Gbit/s in {}", *speed / 1e9, rises.Span(span)));
}

void JudgeCorrected(const RailRises& rises, const nic::FabricReading& reading, double limit,
                    Findings& found) {
  const auto corrected = CorrectedBits(rises, reading);
  if (!corrected.rise) return;
  const auto wire = BitsOnTheWire(rises, reading, *corrected.rise);
  if (!wire) return;
  found.judged = true;
  const double ratio = corrected.rise->increase / wire->first;
  if (ratio <= limit) return;
  found.faults.push_back(
      fmt::format("{} corrected-bit ratio {:.2g} above {:.2g} ({} / {}{})", reading.netdev, ratio,
                  limit, corrected.source, wire->second,
                  corrected.worst_lane.empty() ? std::string() : "; " + corrected.worst_lane));
}

}  // namespace

Findings LinkErrorFindings(const RailRises& rises, const Thresholds& limits) {
  Findings found;
  for (const auto counter : kLost) {
    rises.EachRise(counter, [&](const nic::FabricReading& reading, const nic::FabricSample& sample,
                                const CounterDelta& rise) {
      found.judged = true;
      if (rise.increase <= 0) return;
      found.faults.push_back(fmt::format("{} {} rose by {:.0f} in {} (frames lost on the link)",
                                         reading.netdev, sample.source, rise.increase,
                                         rises.Span(rise)));
    });
  }
  for (const auto* reading : rises.Readings()) {
    JudgeCorrected(rises, *reading, limits.link_max_corrected_bit_ratio, found);
  }
  return found;
}

void CheckLinkErrors(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckWindowed(
      inputs, "link_errors", LinkErrorFindings,
      [](const std::string& faults) {
        return faults +
               ": clean or replace the cable or transceiver (ethtool -m for its levels, ethtool -S "
               "for the lanes' errors, ethtool --show-fec for the FEC mode)";
      },
      out);
}

}  // namespace rail::health::detail
