// pfc_pause: the share of the window a rail spent paused on a priority. rx: the switch held this
// port's transmitter (congestion downstream, {rx_prio<p>_pause_duration}); tx: this port held its
// switch (the host cannot absorb what arrives, tx_prio<p>_pause_duration). Judged on every
// priority whose pause durations the driver lists (mlx5 lists them only where PFC is on).
#include <spdlog/fmt/fmt.h>

#include <chrono>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {

void CheckPfcPause(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  const double limit = inputs.thresholds.pfc_pause_max_fraction;
  for (const auto& rail : Rails(inputs)) {
    bool judged = false;
    std::vector<std::string> paused;
    for (const auto* reading : RailReadings(inputs, rail.name)) {
      for (const auto& sample : reading->samples) {
        if (sample.counter != nic::FabricCounter::kPfcPauseMicroseconds) continue;
        const auto rise = SampleDelta(inputs, rail.name, *reading, sample);
        if (!rise || rise->span <= base::Duration::zero()) continue;
        judged = true;
        const double seconds = std::chrono::duration<double>(rise->span).count();
        const double share = rise->increase * 1e-6 / seconds;
        if (share <= limit) continue;
        const bool received = sample.direction == nic::Direction::kRx;
        paused.push_back(fmt::format(
            "{} {} {:.0f}% of the last {} on priority {} ({})", reading->netdev,
            received ? "transmitter paused by its switch" : "paused its switch", share * 100,
            SpanText(rise->span), sample.priority.value_or(0), sample.source));
      }
    }
    if (!judged) continue;
    out.push_back(Verdict(
        "pfc_pause", rail.name, "",
        paused.empty()
            ? std::string()
            : fmt::format("{} (above {:.0f}%): received pause means congestion downstream (a "
                          "slow receiver or an oversubscribed switch port: find the peer whose "
                          "tx pause rises); transmitted pause means this host cannot absorb what "
                          "arrives (receive buffers, PCIe, a stalled consumer)",
                          Join(paused, "; "), limit * 100)));
  }
}

}  // namespace rail::health::detail
