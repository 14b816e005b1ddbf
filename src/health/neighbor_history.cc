#include "rail/health/neighbor_history.h"

#include <algorithm>

#include "health/check_helpers.h"

namespace rail::health {

std::string SwitchPort(const lldp::Neighbor& neighbor) {
  const std::string name =
      neighbor.system_name.empty() ? "chassis " + neighbor.chassis_id : neighbor.system_name;
  return name + " port " + neighbor.port_id;
}

namespace {

// The ports a rail hears, in a stable order: lldpd's order is no change.
std::string Ports(const inventory::RailNeighbors& rail) {
  std::vector<std::string> ports;
  for (const auto& announcement : rail.announcements) {
    ports.push_back(SwitchPort(announcement.neighbor));
  }
  std::sort(ports.begin(), ports.end());
  return detail::Join(ports, " and ");
}

}  // namespace

void NeighborHistory::Observe(const std::vector<inventory::RailNeighbors>& rails,
                              base::TimePoint now) {
  std::lock_guard lock(mutex_);
  for (const auto& rail : rails) {
    if (rail.announcements.empty()) continue;
    const std::string ports = Ports(rail);
    auto [last, first] = ports_.try_emplace(rail.rail, ports);
    if (first || last->second == ports) continue;
    changes_[rail.rail] = NeighborChange{last->second, ports, now};
    last->second = ports;
  }
}

std::optional<NeighborChange> NeighborHistory::RecentChange(const std::string& rail,
                                                            base::TimePoint now,
                                                            base::Duration window) const {
  std::lock_guard lock(mutex_);
  const auto change = changes_.find(rail);
  if (change == changes_.end() || now - change->second.at >= window) return std::nullopt;
  return change->second;
}

}  // namespace rail::health
