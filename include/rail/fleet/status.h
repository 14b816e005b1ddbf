// What the agent's fleet side knows now, for the fleet collector and the landing page: the
// discovery sources, who this agent is among the targets, and the plan of the current epoch.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rail/fleet/discovery.h"
#include "rail/fleet/plan.h"

namespace rail::fleet {

// Why the plan gives this agent no peer although the fleet has more than one target
// (rail_fleet_plan_empty{reason}): this agent is not among the targets (self_not_found), it has
// no rail (no_local_rails), no other target is on its rails (no_peer_on_rails), or every planned
// target is this agent or another one's duplicate (duplicates_only). In the metric's order.
inline constexpr std::array<std::string_view, 4> kPlanEmptyReasons = {
    "self_not_found", "no_local_rails", "no_peer_on_rails", "duplicates_only"};

struct FleetStatus {
  std::vector<SourceStatus> sources;
  std::size_t peers = 0;  // merged targets, this agent included
  std::string self;       // this agent's target; empty when not found
  std::uint64_t epoch = 0;
  std::vector<PlannedPair> pairs;            // the current plan
  std::map<std::string, std::size_t> rails;  // planned peers by rail (every local rail listed)
  std::uint64_t plan_changes = 0;            // recomputations that changed the pairs
  // One of kPlanEmptyReasons while the plan is empty and the fleet has more than one target;
  // empty otherwise (a plan with peers, or a fleet of one has nobody to probe).
  std::string plan_empty;
  std::size_t max_probe_series = 0;  // fleet.max_probe_series
  // The name each planned peer gave in its welcome, and the targets left out as another planned
  // target's duplicate, or as this agent itself (duplicates.h).
  std::map<std::string, std::string> peer_names;
  std::vector<std::string> duplicates;
};

}  // namespace rail::fleet
