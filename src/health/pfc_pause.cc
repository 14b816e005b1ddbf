// pfc_pause: the share of the window a rail spent paused on a priority. rx: the switch held this
// port's transmitter (congestion downstream, {rx_prio<p>_pause_duration}); tx: this port held its
// switch (the host cannot absorb what arrives, tx_prio<p>_pause_duration). Judged on every
// priority whose pause durations the driver lists (mlx5 lists them only where PFC is on).
#include <spdlog/fmt/fmt.h>

#include <chrono>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {

Findings PauseFindings(const RailRises& rises, double max_fraction) {
  Findings found;
  for (const auto* reading : rises.Readings()) {
    for (const auto& sample : reading->samples) {
      if (sample.counter != nic::FabricCounter::kPfcPauseMicroseconds) continue;
      const auto rise = rises.Sample(*reading, sample);
      if (!rise || rise->span <= base::Duration::zero()) continue;
      found.judged = true;
      const double seconds = std::chrono::duration<double>(rise->span).count();
      const double share = rise->increase * 1e-6 / seconds;
      if (share <= max_fraction) continue;
      const bool received = sample.direction == nic::Direction::kRx;
      found.faults.push_back(
          fmt::format("{} {} {:.0f}% of {} on priority {} ({})", reading->netdev,
                      received ? "transmitter paused by its switch" : "paused its switch",
                      share * 100, rises.Span(*rise), sample.priority.value_or(0), sample.source));
    }
  }
  return found;
}

void CheckPfcPause(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  const double limit = inputs.thresholds.pfc_pause_max_fraction;
  for (const auto& rail : Rails(inputs)) {
    const auto paused = PauseFindings(WindowRises(inputs, rail), limit);
    if (!paused.judged) continue;
    out.push_back(Verdict(
        "pfc_pause", rail.name, "",
        paused.faults.empty()
            ? std::string()
            : fmt::format("{} (above {:.0f}%): received pause means congestion downstream (a "
                          "slow receiver or an oversubscribed switch port: find the peer whose "
                          "tx pause rises); transmitted pause means this host cannot absorb what "
                          "arrives (receive buffers, PCIe, a stalled consumer)",
                          Join(paused.faults, "; "), limit * 100)));
  }
}

}  // namespace rail::health::detail
