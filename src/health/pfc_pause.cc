// pfc_pause: the share of the window a rail spent paused on a priority. rx: the switch held this
// port's transmitter (congestion downstream, {rx_prio<p>_pause_duration}); tx: this port held its
// switch (the host cannot absorb what arrives, tx_prio<p>_pause_duration). Judged on every
// priority whose pause durations the driver lists (mlx5 lists them only where PFC is on). A driver
// that counts pause frames but no pause time (ice) is judged on its XOFF frames per second, and
// the reason says so.
#include <spdlog/fmt/fmt.h>

#include <chrono>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {
namespace {

bool HasDurations(const nic::FabricReading& reading) {
  return std::any_of(reading.samples.begin(), reading.samples.end(), [](const auto& sample) {
    return sample.counter == nic::FabricCounter::kPfcPauseMicroseconds;
  });
}

const char* Held(nic::Direction direction) {
  return direction == nic::Direction::kRx ? "transmitter paused by its switch"
                                          : "paused its switch";
}

}  // namespace

Findings PauseFindings(const RailRises& rises, const Thresholds& limits) {
  Findings found;
  rises.EachSampleRise(
      nic::FabricCounter::kPfcPauseMicroseconds,
      [&](const auto& reading, const auto& sample, const CounterDelta& rise) {
        if (rise.span <= base::Duration::zero()) return;
        found.judged = true;
        const double share = PerSecond(rise) * 1e-6;
        if (share <= limits.pfc_pause_max_fraction) return;
        found.faults.push_back(fmt::format("{} {} {:.0f}% of {} on priority {} ({}; above {:.0f}%)",
                                           reading.netdev, Held(sample.direction), share * 100,
                                           rises.Span(rise), sample.priority.value_or(0),
                                           sample.source, limits.pfc_pause_max_fraction * 100));
      });
  rises.EachSampleRise(
      nic::FabricCounter::kPfcPauseFrames,
      [&](const auto& reading, const auto& sample, const CounterDelta& rise) {
        if (HasDurations(reading) || rise.span <= base::Duration::zero()) return;
        found.judged = true;
        const double rate = PerSecond(rise);
        if (rate <= limits.pause_max_frames_per_second) return;
        found.faults.push_back(fmt::format(
            "{} {}: {:.0f} pause frames per second over {} on priority {} ({}; above "
            "health.pause_max_frames_per_second {:.0f}; {} counts pause frames, not pause time)",
            reading.netdev, Held(sample.direction), rate, rises.Span(rise),
            sample.priority.value_or(0), sample.source, limits.pause_max_frames_per_second,
            reading.driver.empty() ? "the driver" : reading.driver));
      });
  return found;
}

void CheckPfcPause(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  CheckWindowed(
      inputs, "pfc_pause", PauseFindings,
      [](const std::string& faults) {
        return faults +
               ": received pause means congestion downstream (a slow receiver or an oversubscribed "
               "switch port: find the peer whose tx pause rises); transmitted pause means this "
               "host "
               "cannot absorb what arrives (receive buffers, PCIe, a stalled consumer)";
      },
      out);
}

}  // namespace rail::health::detail
