// Each rail's switch ports across scrapes: a rail whose LLDP neighbour changes was re-cabled or
// failed over, which no single reading can tell. rail_cabling reports the change for
// health.cabling.change_window after it.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rail/base/clock.h"
#include "rail/inventory/neighbors.h"

namespace rail::health {

struct NeighborChange {
  std::string before;  // the switch ports the rail heard last ("leaf-rail1 port Ethernet1/1")
  std::string after;   // the ones it hears since
  base::TimePoint at;  // the first reading that heard `after`
};

// Thread-safe: concurrent scrapes observe and read it.
class NeighborHistory {
 public:
  // What each rail hears now. A rail that hears nothing (lldpd gone, the TTL ran out) keeps its
  // last ports: only hearing other ones is a change.
  void Observe(const std::vector<inventory::RailNeighbors>& rails, base::TimePoint now);
  // The rail's latest change, when it came less than `window` before `now`.
  std::optional<NeighborChange> RecentChange(const std::string& rail, base::TimePoint now,
                                             base::Duration window) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> ports_;  // rail -> the ports it heard last
  std::map<std::string, NeighborChange> changes_;
};

// "leaf-rail0 port Ethernet1/1" (the chassis id when the switch sends no system name).
std::string SwitchPort(const lldp::Neighbor& neighbor);

}  // namespace rail::health
