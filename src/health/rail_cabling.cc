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

std::string Name(const lldp::Neighbor& neighbor) {
  return neighbor.system_name.empty() ? "chassis " + neighbor.chassis_id : neighbor.system_name;
}

std::string Port(const lldp::Neighbor& neighbor) {
  return fmt::format("{} port {}", Name(neighbor), neighbor.port_id);
}

bool Matches(const std::string& pattern, const std::string& name) {
  return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

// What is wrong with `rail`'s neighbour among the host's other heard rails, for people.
std::vector<std::string> Faults(const inventory::RailNeighbors& rail,
                                const std::vector<inventory::RailNeighbors>& heard,
                                const Cabling& layout) {
  std::vector<std::string> faults;
  const auto& mine = rail.announcements.front().neighbor;
  if (const auto pattern = layout.switches.find(rail.rail); pattern != layout.switches.end()) {
    if (!Matches(pattern->second, mine.system_name)) {
      faults.push_back(
          fmt::format("its neighbour {} does not match health.cabling.switches "
                      "'{}'",
                      Port(mine), pattern->second));
    }
  }
  for (const auto& other : heard) {
    if (other.rail == rail.rail) continue;
    const auto& theirs = other.announcements.front().neighbor;
    if (theirs.chassis_id != mine.chassis_id) continue;
    if (theirs.port_id == mine.port_id) {
      faults.push_back(
          fmt::format("rail {} is on the same switch port, {}", other.rail, Port(mine)));
    } else if (layout.rail_optimized) {
      faults.push_back(
          fmt::format("rail {} is on the same switch, {} (rail-optimized wants a "
                      "switch per rail)",
                      other.rail, Port(theirs)));
    }
  }
  return faults;
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
    const auto faults = Faults(rail, heard, layout);
    std::string reason;
    if (!faults.empty()) {
      reason = fmt::format("{} lands on {}: {}", rail.rail,
                           Port(rail.announcements.front().neighbor), Join(faults, "; "));
    }
    out.push_back(Verdict("rail_cabling", rail.rail, "", std::move(reason)));
  }
}

}  // namespace rail::health::detail
