#include "commands/doctor_neighbors.h"

#include <spdlog/fmt/fmt.h>

namespace rail::commands {
namespace {

std::string Describe(const lldp::Neighbor& neighbor) {
  std::string text = fmt::format(
      "{} port {}", neighbor.system_name.empty() ? neighbor.chassis_id : neighbor.system_name,
      neighbor.port_id);
  if (!neighbor.port_description.empty()) text += " (" + neighbor.port_description + ")";
  if (neighbor.vlan) text += fmt::format(", VLAN {}", *neighbor.vlan);
  return text;
}

}  // namespace

std::vector<Finding> NeighborFindings(const std::vector<inventory::RailNeighbors>& rails) {
  std::vector<Finding> out;
  for (const auto& rail : rails) {
    Finding finding;
    finding.check = "neighbor";
    finding.rail = rail.rail;
    finding.evidence = "lldpd's neighbours of " + rail.netdev + " (lldpcli show neighbors)";
    if (rail.state == inventory::NeighborState::kAnnounced) {
      for (const auto& announcement : rail.announcements) {
        if (!finding.summary.empty()) finding.summary += "; ";
        finding.summary += Describe(announcement.neighbor);
      }
    } else {
      finding.summary = std::string(inventory::NeighborStateName(rail.state)) + ": " + rail.reason;
      finding.fix = rail.remedy;
    }
    out.push_back(std::move(finding));
  }
  return out;
}

void NeighborFindings(inventory::Snapshot& snapshot, const std::string& socket,
                      std::vector<Finding>& out) {
  const lldp::LldpdNeighborSource lldpd(socket);
  const auto* recorded = snapshot.sources().nic_statistics;
  const auto rails = inventory::ReadRailNeighbors(
      snapshot.Rails(), lldpd.Read(), recorded != nullptr ? *recorded : nic::KernelStatistics(),
      base::SystemClock().WallNow());
  for (auto& finding : NeighborFindings(rails)) out.push_back(std::move(finding));
}

}  // namespace rail::commands
