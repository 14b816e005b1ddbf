// global_pause: 802.3x (link-level) pause on a rail within the window. It stops every priority of
// the link at once, so on a RoCE rail, which should use PFC on its RoCE priority instead, any
// sustained global pause is a misconfiguration: judged on the share of the window paused where the
// driver counts pause time (mlx5 {rx,tx}_global_pause_duration, listed only while global pause is
// on), else on XOFF frames per second (mlx5 {rx,tx}_pause_ctrl_phy, bnxt_en {rx,tx}_pause_frames,
// ice link_xoff_{rx,tx}.nic).
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {
namespace {

const char* Paused(nic::Direction direction) {
  return direction == nic::Direction::kRx ? "received" : "sent";
}

}  // namespace

Findings GlobalPauseFindings(const RailRises& rises, const Thresholds& limits) {
  Findings found;
  std::vector<const nic::FabricReading*> timed;
  rises.EachSampleRise(nic::FabricCounter::kGlobalPauseMicroseconds,
                       [&](const auto& reading, const auto& sample, const CounterDelta& rise) {
                         found.judged = true;
                         timed.push_back(&reading);
                         const double share = PerSecond(rise) * 1e-6;
                         if (share <= limits.global_pause_max_fraction) return;
                         found.faults.push_back(fmt::format(
                             "{} {} 802.3x pause {:.1f}% of {} ({}; above {:.1f}%)", reading.netdev,
                             Paused(sample.direction), share * 100, rises.Span(rise), sample.source,
                             limits.global_pause_max_fraction * 100));
                       });
  rises.EachSampleRise(
      nic::FabricCounter::kGlobalPauseFrames,
      [&](const auto& reading, const auto& sample, const CounterDelta& rise) {
        if (std::find(timed.begin(), timed.end(), &reading) != timed.end()) return;
        found.judged = true;
        const double rate = PerSecond(rise);
        if (rate <= limits.pause_max_frames_per_second) return;
        found.faults.push_back(fmt::format(
            "{} {} {:.0f} 802.3x pause frames per second over {} ({}; above "
            "health.pause_max_frames_per_second {:.0f}; judged on frames, the driver counts no "
            "global pause time here)",
            reading.netdev, Paused(sample.direction), rate, rises.Span(rise), sample.source,
            limits.pause_max_frames_per_second));
      });
  return found;
}

void CheckGlobalPause(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckWindowed(
      inputs, "global_pause", GlobalPauseFindings,
      [](const std::string& faults) {
        return faults +
               ": 802.3x pause stops every priority of the link, not only RoCE's; turn it off "
               "(ethtool -a shows it, ethtool -A <netdev> rx off tx off, and on the switch port) "
               "and "
               "use PFC on the RoCE priority (dcb pfc show)";
      },
      out);
}

}  // namespace rail::health::detail
