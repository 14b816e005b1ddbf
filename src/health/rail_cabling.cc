// rail_cabling: each rail's switch port, as its LLDP neighbour announces it, against the layout
// of health.cabling. Two rails of a host on one switch port is always a fault (one of them is
// not where it seems); with `layout: rail-optimized` so are two rails on one switch, and with
// `switches` a rail whose switch's name does not match its pattern. A rail-optimized fabric keeps
// rail i's traffic on leaf i: a cable in the wrong leaf links up at full speed and sends rail
// traffic through the spine.
#include <fnmatch.h>
#include <spdlog/fmt/fmt.h>

#include "health/check_helpers.h"

namespace rail::health::detail {
namespace {

bool Matches(const std::string& pattern, const std::string& name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

// What is wrong with one neighbour `mine` of `rail` among the host's other heard rails.
void NeighborFaults(const inventory::RailNeighbors& rail, const lldp::Neighbor& mine,
                    const std::vector<inventory::RailNeighbors>& heard, const Cabling& layout,
                    std::vector<std::string>& faults) {
  if (const auto pattern = layout.switches.find(rail.rail); pattern != layout.switches.end()) {
    if (!Matches(pattern->second, mine.system_name)) {
      faults.push_back(
          fmt::format("its neighbour {} does not match health.cabling.switches "
                      "'{}'",
                      SwitchPort(mine), pattern->second));
    }
  }
  for (const auto& other : heard) {
    if (other.rail == rail.rail) continue;
    for (const auto& announcement : other.announcements) {
      const auto& theirs = announcement.neighbor;
      if (theirs.chassis_id != mine.chassis_id) continue;
      if (theirs.port_id == mine.port_id) {
        faults.push_back(
            fmt::format("rail {} is on the same switch port, {}", other.rail, SwitchPort(mine)));
      } else if (layout.rail_optimized) {
        faults.push_back(
            fmt::format("rail {} is on the same switch, {} (rail-optimized wants a "
                        "switch per rail)",
                        other.rail, SwitchPort(theirs)));
      }
    }
  }
}

// Every neighbour counts, so that the verdict does not depend on lldpd's order: a rail that
// hears two switches at once (a recabling within the old one's TTL, something in between) is
// judged on both.
std::string Reason(const HealthInputs& inputs, const inventory::RailNeighbors& rail,
                   const std::vector<inventory::RailNeighbors>& heard) {
  const Cabling& layout = inputs.thresholds.cabling;
  std::vector<std::string> faults;
  std::vector<std::string> ports;
  for (const auto& announcement : rail.announcements) {
    NeighborFaults(rail, announcement.neighbor, heard, layout, faults);
    ports.push_back(SwitchPort(announcement.neighbor));
  }
  if (inputs.neighbor_history != nullptr) {
    if (const auto change =
            inputs.neighbor_history->RecentChange(rail.rail, inputs.now, layout.change_window)) {
      faults.push_back(fmt::format(
          "its neighbour changed {:.0f} s ago, from {} (a re-cabling or a failover; judged for "
          "health.cabling.change_window)",
          std::chrono::duration<double>(inputs.now - change->at).count(), change->before));
    }
  }
  if (faults.empty()) return "";
  return fmt::format("{} lands on {}: {}", rail.rail, Join(ports, " and "), Join(faults, "; "));
}

}  // namespace

void CheckRailCabling(const HealthInputs& inputs, std::vector<CheckResult>& out) {
  if (inputs.neighbors == nullptr) return;
  const Cabling& layout = inputs.thresholds.cabling;
  const bool expected = layout.rail_optimized || !layout.switches.empty();
  std::vector<inventory::RailNeighbors> heard;
  for (const auto& rail : *inputs.neighbors) {
    if (!rail.announcements.empty()) heard.push_back(rail);
  }
  for (const auto& rail : *inputs.neighbors) {
    if (rail.announcements.empty()) {
      // Only a configured layout makes a rail without a known neighbour worth a word.
      if (expected && rail.state != inventory::NeighborState::kInfiniband) {
        out.push_back(HeldBack("rail_cabling", rail.rail, "",
                               fmt::format("no LLDP neighbour known ({}): {}",
                                           inventory::NeighborStateName(rail.state), rail.reason)));
      }
      continue;
    }
    out.push_back(Verdict("rail_cabling", rail.rail, "", Reason(inputs, rail, heard)));
  }
}

}  // namespace rail::health::detail
