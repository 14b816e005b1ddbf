// roce_drops: RoCE packets were lost within the window: the responder saw out-of-sequence packets
// (out_of_sequence) or the requester NAKs for a sequence error (packet_seq_err) in the port's
// hw_counters, or the NIC discarded packets of a lossless priority (rx_prio<p>_buf_discard,
// _cong_discard on a priority with PFC counters). On a lossless fabric each means a retransmit.
#include <spdlog/fmt/fmt.h>

#include <set>

#include "health/check_helpers.h"
#include "health/fabric_evidence.h"

namespace rail::health::detail {
namespace {

// The priorities the driver lists pause counters for: the lossless ones.
std::set<unsigned> PfcPriorities(const nic::FabricReading& reading) {
  std::set<unsigned> priorities;
  for (const auto& sample : reading.samples) {
    if (sample.counter == nic::FabricCounter::kPfcPauseFrames && sample.priority) {
      priorities.insert(*sample.priority);
    }
  }
  return priorities;
}

}  // namespace

Findings DropFindings(const RailRises& rises) {
  Findings found;
  for (const char* file : {"out_of_sequence", "packet_seq_err"}) {
    const auto rise = rises.HwCounter(file);
    if (!rise) continue;
    found.judged = true;
    if (rise->increase > 0) {
      found.faults.push_back(
          fmt::format("{} rose by {:.0f} in {}", file, rise->increase, rises.Span(*rise)));
    }
  }
  for (const auto* reading : rises.Readings()) {
    const auto lossless = PfcPriorities(*reading);
    for (const auto& sample : reading->samples) {
      const bool discard = sample.counter == nic::FabricCounter::kBufferDiscards ||
                           sample.counter == nic::FabricCounter::kCongestionDiscards;
      if (!discard || !sample.priority || !lossless.contains(*sample.priority)) continue;
      const auto rise = rises.Sample(*reading, sample);
      if (!rise) continue;
      found.judged = true;
      if (rise->increase > 0) {
        found.faults.push_back(fmt::format("{} {} rose by {:.0f} in {} on lossless priority {}",
                                           reading->netdev, sample.source, rise->increase,
                                           rises.Span(*rise), *sample.priority));
      }
    }
  }
  return found;
}

void CheckRoceDrops(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  for (const auto& rail : Rails(inputs)) {
    const auto drops = DropFindings(WindowRises(inputs, rail));
    if (!drops.judged) continue;
    out.push_back(Verdict(
        "roce_drops", rail.name, "",
        drops.faults.empty()
            ? std::string()
            : fmt::format("RoCE packets lost: {}; on a lossless priority that means PFC is off or "
                          "mismatched somewhere on the path (dcb pfc show on both hosts and the "
                          "switch) or a buffer overflowed",
                          Join(drops.faults, "; "))));
  }
}

}  // namespace rail::health::detail
